#pragma once
// Plain records as stored. The store reads and writes these; the brain decides with them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/clock.h"
#include "scheduler/model/hang_watch.h"
#include "scheduler/model/job_state.h"
#include "scheduler/model/node_state.h"
#include "scheduler/model/preemption_candidate.h"
#include "scheduler/model/replica_state.h"
#include "scheduler/model/score_breakdown.h"
#include "scheduler/model/site_health.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

using JobId = std::int64_t;
using AttemptId = std::int64_t;

struct ClusterRow {
  std::string name;
  SiteHealth health = SiteHealth::healthy;
  std::optional<Millis> unreachable_since_ms;
  std::string message;
  Admission admission = Admission::active;
  Millis created_ms = 0;               // when orchestrate first knew the cluster
  std::string burn_in_token;           // the probe round in flight (admission burn-in), else empty
  std::optional<Millis> admission_ms;  // when a person last drained, activated or retired it
  std::string admission_reason;        // and why
  std::optional<Millis> delivered_ms;  // when a cluster ordered with a promised date arrived
};

// GPUs orchestrate's attempts hold at one cluster.
struct GpusInUse {
  int held = 0;  // by live or unsettled attempts: what placement counts as ours
  // by those the site has started (running, or ended and not yet settled): the ones its own
  // count of busy GPUs includes; an attempt still in its queue holds none there yet
  int at_site = 0;
};

// A node as its site last reported it, and its standing in orchestrate (quarantine).
struct NodeRow {
  std::string cluster;
  std::string name;
  int gpus = 0;
  bool healthy = true;
  std::string reason;  // the site's words when not healthy
  Millis seen_ms = 0;  // when the site last listed it
  int gpus_busy = 0;   // GPUs jobs hold there, every tenant's, as the site last reported them
  // GPUs of our attempts that ended on the node after that report (issue 42): the report still
  // counts them busy, but they are no other tenant's. Set when such an attempt settles at its
  // site (Store::update_attempt), cleared when the site lists its nodes again.
  int gpus_ours_gone = 0;
  int cpus = 0;                // the node's CPUs, as the site reports them (0: not said)
  std::int64_t memory_mb = 0;  // its memory in MiB (0: not said); placement checks job shapes
  NodeState state = NodeState::active;
  int quarantines = 0;  // times quarantined, ever
  std::optional<Millis> quarantined_at_ms;
  std::string state_reason;  // why quarantined or retired (or released)
  std::string probe_token;   // a release probe in flight, else empty
  // Lemons judged by rate (issue 43, scheduler/health/node_rate.h), running totals so that
  // judging a node never reads its history: failures under work, one per incident (the brain
  // counts them as it writes the ledger), and GPU-hours of our attempts that ran on it (added
  // when an attempt ends; a running one's time is added by whoever reads).
  int work_failures = 0;
  double work_gpu_hours = 0;
};

// A hot spare (issue 38): a node a cluster's `spares:` keeps burned in and held idle, so that a
// gang that loses a node relaunches at once on its survivors and the spare. Burned in first (a
// probe round of that node alone, whose token is the spare's token and "-b"), then held by a
// holder run of that token at the site (Slurm: a job pinned to the node; local: a process on
// that virtual node), ready once the holder runs. A job takes it by cancelling the holder in
// the same transaction that records its launch there.
//   burning_in -> holding | failed     (the probe's verdict: a failed node is quarantined)
//   holding -> ready                   (the holder runs)
//   holding|ready -> taken | lost | released
//   burning_in -> released | lost      (the cluster no longer wants it, or its site lost it)
enum class SpareState { burning_in, holding, ready, taken, failed, lost, released };
std::string_view to_string(SpareState s);
std::optional<SpareState> parse_spare_state(std::string_view s);
// Burning in, holding or ready: the spare keeps its node from other work.
inline bool is_live(SpareState s) {
  return s == SpareState::burning_in || s == SpareState::holding || s == SpareState::ready;
}

struct SpareRow {
  std::int64_t id = 0;
  std::string cluster;
  std::string node;
  std::string token;  // the holder's, at the site
  SpareState state = SpareState::burning_in;
  int gpus = 0;
  Millis created_ms = 0;
  std::optional<Millis> held_ms;   // the holder was asked for: from here its GPUs are paid idle
  std::optional<Millis> ready_ms;  // the holder runs
  std::optional<Millis> ended_ms;
  std::string reason;             // why it ended (failed burn-in, lost, released)
  std::optional<JobId> taken_by;  // the job whose launch took it
};

// What a cluster's spares have cost and done, ever: GPU-hours held idle (paid for), and how
// many were taken by a job, failed their burn-in or were lost at the site.
struct SpareTotals {
  double gpu_hours = 0;  // ended spares' and the live ones' up to now
  int taken = 0;
  int failed = 0;
  int lost = 0;
};

// One node's probe result from a burn-in round or a release check, with orchestrate's verdict.
struct ProbeRow {
  std::int64_t id = 0;
  std::string cluster;
  std::string node;
  std::string token;  // the round
  Millis at_ms = 0;
  bool passed = false;
  std::string reason;
  std::optional<double> gemm_gflops;
  std::optional<double> write_mb_s;
  std::optional<double> read_mb_s;
  std::string raw;  // the probe's JSON line (empty when the node gave no result)
};

// MFU history, downsampled: one row per attempt per minute. MFU is work over time: mfu_sum is the
// sum of each step's MFU x its step time (the step's work, in peak-seconds) and time_s the step
// time it covers, so a minute's MFU is their ratio, never a mean of per-step ratios (which
// over-weights fast steps: a gang slowed on one node would look far better than it ran).
// Rows written before schema 30 have time_s 0 and a plain sum of per-step MFUs.
struct MfuBucketRow {
  AttemptId attempt_id = 0;
  std::string cluster;
  std::string nodes;  // the attempt's node set, comma-separated
  Millis bucket_ms = 0;
  double mfu_sum = 0;
  int samples = 0;
  double time_s = 0;
  double mean() const {
    if (time_s > 0) return mfu_sum / time_s;
    return samples > 0 ? mfu_sum / samples : 0;
  }
};

// A site's reachability over time (for the scorecard's availability).
struct HealthLogRow {
  std::string cluster;
  Millis at_ms = 0;
  SiteHealth health = SiteHealth::healthy;
};

// One entry of a cluster's node ledger: what happened to a node, when, and (for a failure
// under a job) which attempt it hit. Kinds: node-unhealthy, node-healthy, node-failure.
struct NodeEventRow {
  std::int64_t id = 0;
  std::string cluster;
  std::string node;
  Millis at_ms = 0;
  std::string kind;
  std::string message;
  std::optional<std::int64_t> job_id;
  std::optional<int> attempt_no;
  // What the entry is part of (scheduler/health/incidents.h): entries of one incident count as
  // one failure. Empty (entries of older versions): an incident of its own.
  std::string incident;
};

struct JobRow {
  JobId id = 0;
  std::string name;
  JobState state = JobState::pending;
  JobSpec spec;
  int infra_restarts = 0;
  int user_restarts = 0;
  std::optional<Millis> next_attempt_ms;  // earliest time of the next placement (backoff)
  std::string reason;                     // why it waits or failed, for people
  Millis created_ms = 0;
  Millis updated_ms = 0;
  // Moved by the database itself (schema v8: job_revisions and its triggers) on every write to
  // the job's row, its attempts or its checkpoints: what a job's rendering depends on. Read only.
  std::int64_t revision = 0;
};

// A job's id and revision: the key of a cached rendering of its listing.
struct JobKey {
  JobId id = 0;
  std::int64_t revision = 0;
};

// What placement needs to know of a job that was written: its state, when it may next be
// placed, and the size of what it asks for (Store::job_changes, Store::waiting_jobs).
struct JobChange {
  JobId id = 0;
  JobState state = JobState::pending;
  std::optional<Millis> next_attempt_ms;
  int nodes = 1;
  int gpus_per_node = 0;
  int priority = 0;  // JobSpec::priority: the queue's first key
};

// A page of GET /jobs: newest first, below a cursor (the last id of the previous page).
struct JobQuery {
  std::optional<JobState> state;
  std::optional<std::string> cluster;  // the cluster of the job's latest attempt
  std::optional<std::string> owner;    // who submitted it (the API token's user)
  std::optional<std::string> team;
  std::optional<std::string> group;  // a sweep's name, or the spec's `group:`
  std::optional<JobId> before_id;
  int limit = 100;
};

struct AttemptRow {
  AttemptId id = 0;
  JobId job_id = 0;
  int no = 0;  // 1, 2, ... per job
  std::string cluster;
  std::string token;
  AttemptState state = AttemptState::launching;
  ExitCause cause = ExitCause::none;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string site_job_id;
  std::vector<std::string> nodes;
  int gpus = 0;
  bool cancel_requested = false;
  bool launch_done = false;  // the site confirmed the launch (or adopted it)
  std::optional<std::int64_t> resumed_from_step;
  std::string resumed_from_path;
  Millis started_ms = 0;
  std::optional<Millis> ended_ms;
  std::optional<std::int64_t> first_step;
  std::optional<std::int64_t> last_step;
  double tokens_total = 0;     // tokens over steps that reported them with a step time
  double step_time_total = 0;  // seconds over those same steps
  // Work over time: tokens_total / step_time_total as MFU; null while mfu_flag is set.
  std::optional<double> mfu;
  // Why its MFU is not a measurement (above 100% or below 0: the model's size or the cluster's
  // peak FLOP/s is misconfigured), naming what to fix; "" when fine. Set once, kept.
  std::string mfu_flag;
  std::int64_t steps_lost = 0;             // steps re-done by the next attempt
  std::optional<Millis> running_ms;        // when it was first seen running
  std::optional<Millis> last_progress_ms;  // when its last progress line was seen (hang check)
  nlohmann::json mfu_watch;                // MfuWatchState (scheduler/health/mfu_watch.h)
  // Silence allowed after the first progress line (0: never) and before it (0: never hung then);
  // see scheduler/lifecycle/hang_policy.h. hang_watch holds what adapts the first.
  Millis hang_after_ms = 0;
  Millis startup_timeout_ms = 0;
  HangWatch hang_watch;
  // The node of the task that failed first, when the site named it (ExitStatus::failed_node).
  std::string failed_node;
  // What failed, when it ended with a failure (lifecycle/error_excerpt.h): the classifier's
  // evidence, a hint for exit codes 126/127 and the failing task's last lines, joined with "\n"
  // (at most 2 KiB); "" otherwise.
  std::string error_excerpt;
  // The site has confirmed that nothing of this attempt runs any more (it reported it exited or
  // unknown). An attempt the brain ended on its own (site silent past its grace) stays unsettled,
  // and is still watched, until then: if its site comes back and still runs it, it is stopped.
  bool site_done = false;
  // The last sign of life of what ended it (its last progress line, its failed task's last
  // heartbeat, its site's last answer), set when the brain ends it: the scorecard's detection
  // runs from here to ended_ms.
  std::optional<Millis> last_alive_ms;
  // Preemption for priority (docs/scheduling.md): the job this attempt makes room for, and when
  // it was asked to save; it is stopped at its next checkpoint or after its grace.
  std::optional<JobId> preempt_for;
  std::optional<Millis> preempt_asked_ms;
  // The job's own checkpoint directory at the attempt's site (<checkpoints_dir>/job-<id>,
  // model/checkpoint_dir.h): every checkpoint it reports must lie strictly inside. Written when
  // the attempt is placed; empty in attempts placed before it existed (schema v25), which are
  // confined to the directory their cluster's checkpoint root gives the job now.
  std::string checkpoint_dir;
  // When the restart policy let this attempt start (the end of its job's backoff; nullopt for a
  // first attempt), and when its first progress line was seen: with the previous attempt's end
  // they split a recovery into its parts (health/recovery_breakdown.h).
  std::optional<Millis> due_ms;
  std::optional<Millis> first_progress_ms;
  // Issue 42: why an attempt placed and stopped before it launched never ran ("its checkpoint
  // at step 20 was gone", "cancelled before launch"); "" for one that launched. Such an
  // attempt resumed from nothing and is not counted as one of the job's attempts.
  std::string not_launched;
};

// A cluster added to a running server (`orchestrate cluster add`): its name, where its
// definition came from (the file the client read), and that definition, a clusters document.
struct AddedClusterRow {
  std::string name;
  std::string source;
  std::string document;
  Millis added_ms = 0;
};

// A support ticket with a cluster's provider (issue 15): when it was opened, first answered by
// the provider and resolved, and what it concerns (nodes, a node-ledger incident).
struct TicketRow {
  std::int64_t id = 0;
  std::string cluster;
  std::string summary;
  std::vector<std::string> nodes;
  std::string incident;  // a node-ledger incident key, or empty
  Millis opened_ms = 0;
  std::optional<Millis> first_response_ms;  // the provider's first answer
  std::optional<Millis> resolved_ms;        // closed
  std::string resolution;
};

// One entry of a ticket's history: an update by the team or an answer of the provider.
struct TicketNoteRow {
  std::int64_t id = 0;
  std::int64_t ticket_id = 0;
  Millis at_ms = 0;
  std::string kind;  // "opened", "note", "provider", "closed"
  std::string text;
};

struct CheckpointRow {
  std::int64_t id = 0;
  JobId job_id = 0;
  AttemptId attempt_id = 0;
  std::int64_t step = 0;
  std::string path;
  std::optional<double> save_time_s;
  Millis at_ms = 0;
  std::string cluster;                     // where the attempt that saved it ran (filled on read)
  std::optional<nlohmann::json> manifest;  // Manifest JSON, once computed at the site
  std::optional<std::int64_t> bytes;       // total size, once the manifest is known
};

// One copy of a checkpoint (checkpoint_id set) or of a dataset (dataset set) at one site.
struct ReplicaRow {
  std::int64_t id = 0;
  std::optional<std::int64_t> checkpoint_id;
  std::string dataset;
  std::string cluster;
  std::string path;
  ReplicaState state = ReplicaState::present;
  std::string detail;  // why it is in that state, for people
  Millis updated_ms = 0;
  std::optional<Millis> verified_ms;
  std::optional<Millis> audited_ms;  // last audit that found it intact
  // The directory the copy must lie in at its site, after resolving links (issue 37): the
  // checkpoint directory of the attempt that reported it, or orchestrate's replica directory of
  // the job for a copy it made. Listings and deletions are refused outside it. Empty: a dataset
  // (registered by a person), or a copy recorded before schema v25 (its job's directories at
  // that site are assumed; DataRegistry::confinement_of).
  std::string confined_to;
  // A copy on this node's own disk at `cluster` (tiered checkpoints, issue 38): the fast tier,
  // resumed from only on that node and lost with it. Empty: on the site's shared storage.
  std::string node;
};

// On the site's shared storage (a source for copies, and where a move's resume may read it),
// not on one node's own disk.
inline bool on_shared_storage(const ReplicaRow& r) {
  return r.node.empty();
}

struct DatasetRow {
  std::string name;
  std::optional<nlohmann::json> manifest;  // from the first copy verified
  std::int64_t bytes = 0;                  // 0 until the manifest is known
  Millis created_ms = 0;
};

// A checkpoint save an agent saw run past its bound (issue 43, docs/health.md "I/O stalls"): one
// row per save (attempt, step, path), however many polls saw it; the scorecard counts them per
// cluster (storage health).
struct IoStallRow {
  std::int64_t attempt_id = 0;
  JobId job_id = 0;
  std::string cluster;
  std::string node;
  std::int64_t step = 0;
  std::string path;
  std::string fs;
  std::string mount;
  double running_s = 0;
  double after_s = 0;
  Millis at_ms = 0;
};

// One cell of the running cost tally (issue 45, migration 36, store_costs.cpp): the GPU-hours
// and money of ended attempts in one UTC month ("2026-12"; kCostAllTime for every month), team
// ("" for a job without one), cluster and kind (lifecycle/attempt_cost.h's cost_kind_name:
// useful, redone, restart, queued, failed). Added to by Store::add_costs, never rewritten.
struct CostTallyRow {
  std::string month;
  std::string team;
  std::string cluster;
  std::string kind;
  double gpu_hours = 0;
  double money = 0;
};
inline constexpr const char* kCostAllTime = "*";

// An event a webhook may be told of (Store::add_event and add_node_event copy them from events
// and node_events as they write them): kind is the event's (succeeded, failed, attempt-ended,
// mfu-drop, io-stall, checkpoint-lost, site-down, quarantined, retired).
struct NoticeRow {
  std::int64_t id = 0;
  Millis at_ms = 0;
  std::string kind;
  std::string message;
  std::optional<JobId> job_id;
  std::optional<int> attempt_no;
  std::string cluster;  // node events
  std::string node;
};

struct TransferRow {
  std::int64_t id = 0;
  std::optional<std::int64_t> checkpoint_id;  // what it copies: a checkpoint ...
  std::string dataset;                        // ... or a dataset
  std::int64_t replica_id = 0;                // the destination copy it writes
  std::string src_cluster;
  std::string src_path;
  std::string dst_cluster;
  std::string dst_path;
  bool directory = false;
  TransferState state = TransferState::queued;
  std::string why;  // why it was started ("replication", "re-replicate lost copy", "staging job 7")
  TransferPurpose purpose = TransferPurpose::replication;
  std::optional<JobId> job_id;  // the job it copies for (its checkpoint, its staging); none: none
  std::int64_t bytes_total = 0;
  std::int64_t bytes_done = 0;
  double rate_bps = 0;      // bytes per second, as last reported
  double cap_bps = 0;       // the cap it should run at now; 0: none
  double base_cap_bps = 0;  // the configured cap (throttling returns to it)
  std::optional<Millis> cap_changed_ms;
  int tries = 0;                      // copies started
  std::optional<Millis> next_try_ms;  // not before (backoff after a failure)
  std::string error;                  // the last failure
  std::string route;
  double copy_seconds = 0;  // wall time of the last successful copy
  std::int64_t copied_bytes = 0;
  Millis created_ms = 0;
  std::optional<Millis> started_ms;
  std::optional<Millis> ended_ms;
  Millis updated_ms = 0;
};

struct EventRow {
  std::int64_t id = 0;
  std::optional<JobId> job_id;
  std::optional<int> attempt_no;
  Millis at_ms = 0;
  std::string kind;
  std::string message;
};

// manifest: list (and hash) a copy at the site; remove: delete a copy (retention).
// signal: asks an attempt to save a checkpoint (payload {"signal": "USR1"}), stopping nothing.
enum class ActionKind { launch, cancel, probe, manifest, remove, signal };
std::string_view to_string(ActionKind k);
std::optional<ActionKind> parse_action_kind(std::string_view s);

struct OutboxRow {
  std::int64_t id = 0;
  std::string cluster;
  ActionKind kind = ActionKind::launch;
  std::string token;
  nlohmann::json payload;  // launch: the LaunchRequest as JSON; probe: the ProbeRequest
  Millis created_ms = 0;
  std::optional<Millis> done_ms;
};

struct PlacementVerdictRow {
  JobId job_id = 0;
  std::string cluster;
  bool feasible = false;
  // Read back: the filter's reason, or a feasible cluster's score breakdown as text. Written: the
  // reason; a feasible cluster's breakdown goes in parts, stored as numbers and made text only
  // when read (scheduler/model/score_breakdown.h).
  std::string reason;
  std::optional<double> score;
  bool chosen = false;
  Millis at_ms = 0;
  std::vector<ScorePart> parts;  // written only; empty when read back
  // Every filter that refused the cluster, "name: reason" each (issue 42); empty when feasible.
  // Rows written before keep their one reason here.
  std::vector<std::string> refused_by;
  // The preemptions the decision considered on the cluster, taken or not, and why; and how many
  // more it considered than are kept (Placer::record_verdicts).
  std::vector<PreemptionNote> preemptions;
  int preemptions_more = 0;
  // Read back: a feasible cluster's goodput note (its expected FLOP/s, price and FLOP per unit
  // of money, and whether the decision ranked per cost; issue 45); kind none when it has none.
  ScoreNote goodput;
};

// The run as a series (issue 41, store_series.cpp): one progress line's step as the brain takes it
// in, added to its attempt's bucket of steps (series_buckets). An attempt keeps at most
// kSeriesBucketCap buckets: past it, its buckets merge pairwise (between half and all of the cap
// remain).
inline constexpr std::int64_t kSeriesBucketCap = 2000;
struct SeriesStep {
  std::int64_t step = 0;
  std::optional<double> loss;
  std::optional<std::int64_t> tokens;
  std::optional<double> step_time_s;
  std::optional<double> mfu;  // the step's own MFU (needs its tokens and step time)
  Millis at_ms = 0;
};

// Where an attempt's buckets lie: width steps per bucket, buckets first..last (step / width).
struct SeriesSpan {
  AttemptId attempt_id = 0;
  std::int64_t width = 1;
  std::int64_t first_bucket = 0;
  std::int64_t last_bucket = 0;
  std::int64_t buckets() const { return last_bucket - first_bucket + 1; }
};

// One point of a series: consecutive buckets of one attempt merged. Figures are over the steps
// that reported them: loss the mean (with the lowest and highest), tokens_per_s total tokens over
// their total step time, step_time_s the mean, mfu work over time; nullopt when none did.
struct SeriesPoint {
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  Millis at_ms = 0;  // when its last step was seen
  std::int64_t steps = 0;
  std::optional<double> loss;
  std::optional<double> loss_min;
  std::optional<double> loss_max;
  std::optional<double> tokens_per_s;
  std::optional<double> step_time_s;
  std::optional<double> mfu;
};

// A checkpoint as a series marks it: its step, the attempt (its number) that saved it, when.
struct SeriesCheckpoint {
  std::int64_t step = 0;
  int attempt_no = 0;
  Millis at_ms = 0;
};

}  // namespace orch
