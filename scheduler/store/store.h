#pragma once
// The state of orchestrate in one SQLite file (WAL, foreign keys, versioned migrations).
// One Store is one connection: the brain owns one and writes through it inside transaction();
// site workers and REST handlers open their own for reads, which WAL keeps from blocking the
// brain. Pass ":memory:" for a private in-memory store (tests).
//
// Illegal state transitions are refused: the row is left as it was, an "illegal-transition"
// event is recorded, and ErrorKind::conflict is returned.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/model/held_gpus.h"
#include "scheduler/model/preemption_candidate.h"
#include "scheduler/model/team_use.h"
#include "scheduler/store/rows.h"
#include "scheduler/store/sqlite_db.h"

namespace orch {

class Store {
 public:
  static Result<std::unique_ptr<Store>> open(const std::string& path);

  // Runs body inside BEGIN IMMEDIATE ... COMMIT; rolls back when body returns an error or
  // throws (a throw becomes ErrorKind::internal).
  Result<void> transaction(const std::function<Result<void>()>& body);
  // The jobs this connection inserted or updated in its latest transaction, in order, as they
  // were written (a job changed twice appears twice). Cleared when a transaction begins and when
  // one rolls back, so after a commit it tells exactly what that commit changed: the brain keeps
  // its in-memory queue of waiting jobs from it without reading the jobs table again.
  const std::vector<JobChange>& job_changes() const { return job_changes_; }
  // Grows with every write that can change what placement sees of a cluster: its row, its
  // nodes, an attempt starting, ending or settling; and with every rollback. Equal epochs mean
  // a view of the clusters built from this connection is still current.
  std::uint64_t capacity_epoch() const { return capacity_epoch_; }
  // The part of it that moves what gpus_in_use() returns: an attempt starting, ending or
  // settling, and every rollback. A cluster's row or nodes changing leave it as it is.
  std::uint64_t gpus_epoch() const { return gpus_epoch_; }
  // Grows with every write that gives a worker something to do: an outbox action, a transfer
  // row. The brain's loop wakes the workers only when it moved, so an observation that decided
  // nothing does not set off another round of polls (and with it another observation).
  std::uint64_t work_epoch() const { return work_epoch_; }
  Db& db() { return db_; }

  // Clusters.
  // Registers a cluster the first time it is configured (true), with its admission state and
  // the time it joined; a known cluster is left as it is (false).
  Result<bool> ensure_cluster(const std::string& name, Admission admission = Admission::active,
                              Millis now = 0);
  Result<std::vector<ClusterRow>> clusters();
  Result<std::optional<ClusterRow>> cluster(const std::string& name);
  Result<void> update_cluster(const ClusterRow& row);

  // Nodes. upsert_node writes what the site reports (gpus, healthy, reason, seen, busy) and keeps
  // the node's standing; set_node_standing writes the standing (state, quarantines, reasons,
  // probe).
  Result<std::vector<NodeRow>> nodes(const std::string& cluster);
  Result<std::vector<NodeRow>> all_nodes();
  // Per cluster: its nodes and how many of them are out of service (quarantined or retired),
  // counted by the database (the scorecard's facts) rather than read row by row.
  struct NodeCount {
    std::string cluster;
    int nodes = 0;
    int out_of_service = 0;
  };
  Result<std::vector<NodeCount>> node_counts();
  // The cluster's quarantined nodes, by name (an index of their own: costs what it returns).
  Result<std::vector<NodeRow>> quarantined_nodes(const std::string& cluster);
  Result<std::optional<NodeRow>> node(const std::string& cluster, const std::string& name);
  Result<void> upsert_node(const NodeRow& row);
  // Every node of the cluster was listed at at_ms (seen_ms): one statement for a whole site's
  // listing, where only the nodes whose report changed are upserted.
  Result<void> mark_nodes_seen(const std::string& cluster, Millis at_ms);
  Result<void> set_node_standing(const NodeRow& row);
  // The node's ledger entries of the given kinds at or after since_ms, oldest first.
  Result<std::vector<NodeEventRow>> node_events_since(const std::string& cluster,
                                                      const std::string& node,
                                                      const std::vector<std::string>& kinds,
                                                      Millis since_ms);
  // Every ledger entry of these kinds at or after since_ms, all clusters (scorecard).
  Result<std::vector<NodeEventRow>> node_events_of_kinds(const std::vector<std::string>& kinds,
                                                         Millis since_ms);

  // Probe results, newest first; node empty: the whole cluster.
  Result<void> add_probe(const ProbeRow& row);
  Result<std::vector<ProbeRow>> probes(const std::string& cluster, const std::string& node,
                                       int limit);

  // Site reachability history.
  Result<void> add_health_log(const HealthLogRow& row);
  Result<std::vector<HealthLogRow>> health_log(Millis since_ms);

  // MFU history: adds `samples` samples summing to mfu_sum to the attempt's minute bucket.
  Result<void> add_mfu_samples(AttemptId attempt, const std::string& cluster,
                               const std::string& nodes, Millis at_ms, double mfu_sum, int samples);
  // One attempt's buckets, or (attempt 0) every bucket of a cluster since since_ms; oldest first.
  Result<std::vector<MfuBucketRow>> mfu_series(AttemptId attempt, const std::string& cluster,
                                               Millis since_ms);

  // Every attempt that started or ended at or after since_ms, or is still live, as the
  // scorecard and placement's history count it: where, how long, on how many nodes, how it
  // ended and its MFU. Not the rows: an attempt of 2,048 nodes lists every one of them.
  struct AttemptSummary {
    std::int64_t id = 0;
    JobId job_id = 0;
    int no = 0;
    std::string cluster;
    int gpus = 0;
    int nodes = 0;  // nodes listed for it (0: none known)
    Millis started_ms = 0;
    std::optional<Millis> running_ms;
    AttemptState state = AttemptState::launching;
    std::optional<Millis> ended_ms;
    ExitCause cause = ExitCause::none;
    std::optional<double> mfu;
    std::optional<Millis> last_alive_ms;
    std::optional<Millis> due_ms;
    std::optional<Millis> first_progress_ms;
  };
  Result<std::vector<AttemptSummary>> attempt_summaries_since(Millis since_ms);
  // The save time of every checkpoint at or after since_ms that reported one, with the cluster
  // it was saved at (the scorecard's and placement's checkpoint cost). Two columns, not the
  // rows: a month of checkpoints is thousands, each with its manifest.
  struct SaveTime {
    std::string cluster;
    double save_time_s = 0;
  };
  Result<std::vector<SaveTime>> checkpoint_save_times_since(Millis since_ms);
  // The node ledger. Listing is newest first, at most `limit` entries, of the whole cluster or
  // of one node.
  Result<std::int64_t> add_node_event(const NodeEventRow& row);
  Result<std::vector<NodeEventRow>> node_events(const std::string& cluster,
                                                const std::optional<std::string>& node, int limit);

  // Jobs.
  Result<JobId> insert_job(const JobRow& row);
  Result<std::optional<JobRow>> job(JobId id);
  Result<std::vector<JobRow>> jobs_in_states(const std::vector<JobState>& states);
  // A running total kept by the database's triggers (migration 16): "job_state" (jobs in each
  // state), "attempt_cause" (ended attempts by cause), "transfer_bytes" ("done": bytes copied).
  // A few rows, whatever the history holds.
  Result<std::vector<std::pair<std::string, std::int64_t>>> tallies(const std::string& kind);
  // Notices after id, oldest first, at most limit (the webhook worker's feed).
  Result<std::vector<NoticeRow>> notices_after(std::int64_t id, int limit);
  // The id of the newest notice (0 when none): where a new webhook starts.
  Result<std::int64_t> last_notice_id();
  // Actions of the outbox not yet carried out at the cluster (its worker's queue).
  Result<std::int64_t> pending_action_count(const std::string& cluster);
  Result<std::vector<JobRow>> jobs(std::optional<JobState> state, int limit);
  // A job as REST shows it, without running the spec parser (a stored spec is read back through
  // the YAML parser, which costs far more than the rest of a request): of the spec only the
  // resources (nodes, gpus_per_node) are filled, and the stored document, when asked, goes to
  // *spec as JSON. The brain reads whole jobs with job().
  Result<std::optional<JobRow>> job_listing(JobId id, nlohmann::json* spec = nullptr);
  // One page of jobs, newest first, as ids and revisions: those with an id below before_id
  // (none: from the newest), in the given state and whose latest attempt ran on the given
  // cluster, when set. With a cache of rendered rows keyed by revision, a page then reads the
  // rows of the cache's misses alone (job_listings).
  Result<std::vector<JobKey>> job_page_keys(const JobQuery& query);
  // A job's id and revision; none when there is no such job.
  Result<std::optional<JobKey>> job_key(JobId id);
  // These jobs as job_listing reads them, newest first (ids not found are left out).
  Result<std::vector<JobRow>> job_listings(const std::vector<JobId>& ids);
  // Waiting jobs in placement order without their specs' text (the brain's queue at start).
  Result<std::vector<JobChange>> waiting_jobs();
  // Ids of the jobs not yet ended that have saved a checkpoint (what replication sweeps).
  Result<std::vector<JobId>> unfinished_jobs_with_checkpoints();
  // Changes state (refusing illegal transitions) and saves the other mutable fields.
  Result<void> update_job(const JobRow& row, Millis now);
  Result<void> set_job_state(JobRow& row, JobState to, Millis now);

  // Attempts.
  Result<AttemptId> insert_attempt(const AttemptRow& row);
  // A launch in one go: inserts the attempt (as insert_attempt does) and moves its job to `to`
  // (as set_job_state does, with job's other mutable fields), the job's cluster set to the
  // attempt's: the job's row is written once.
  Result<AttemptId> launch_attempt(JobRow& job, const AttemptRow& attempt, JobState to, Millis now);
  Result<std::optional<AttemptRow>> attempt_by_token(const std::string& token);
  Result<std::vector<AttemptRow>> attempts_of(JobId job);
  // The attempts of each of these jobs, in attempt order: one statement for a page of jobs.
  Result<std::map<JobId, std::vector<AttemptRow>>> attempts_of_jobs(const std::vector<JobId>& jobs);
  Result<std::vector<AttemptRow>> live_attempts(const std::optional<std::string>& cluster);
  // Live attempts, not asked to stop or to make room yet, of jobs that allow preemption and
  // have a priority below `below_priority` (nullopt: any priority, for team quotas' reclaim),
  // with their team and the steps each has run since its job's last checkpoint (issue 18).
  // Reads live attempts only.
  Result<std::vector<PreemptionCandidate>> preemption_candidates(std::optional<int> below_priority);
  // What each live or unsettled attempt holds, with its job's team (team quotas).
  Result<std::vector<TeamUse>> team_uses();
  // What each live or unsettled attempt holds and when it ends at the latest (backfill): its
  // placement plus its job's time_limit; unknown without one, or once it has ended (its
  // processes are on their way out).
  Result<std::vector<AttemptEnd>> attempt_ends();
  // Live attempts not asked to stop whose job's time_limit has passed since their placement.
  Result<std::vector<AttemptRow>> attempts_past_time_limit(Millis now);
  // Attempts the site confirmed but still queues (launching, launch done, not asked to stop).
  Result<std::vector<AttemptRow>> queued_attempts();
  // Attempts asked to make room for a job of higher priority (preempt_for set) that still run
  // or still hold their GPUs (ended, not yet settled): the room they make is on its way.
  Result<std::vector<AttemptRow>> preempting_attempts();
  // Running attempts silent past their limit by `now`: no first progress line within
  // startup_timeout_ms, or none since the last one for hang_after_ms (lifecycle/hang_policy.h).
  Result<std::vector<AttemptRow>> silent_attempts(Millis now);
  // What a site worker polls: live attempts, and ended ones the site has not confirmed gone.
  Result<std::vector<AttemptRow>> watched_attempts(const std::string& cluster);
  // GPUs held by live or unsettled attempts, per cluster (clusters with none are absent), and
  // how many of them by attempts the site has started.
  Result<std::map<std::string, GpusInUse>> gpus_in_use();
  Result<void> update_attempt(const AttemptRow& row);
  Result<void> set_attempt_state(AttemptRow& row, AttemptState to, Millis now);
  // The narrow way back from exited (see can_reinstate): only an attempt stored as exited with
  // cause site_down, to running or launching. Clears the cause, exit status and end time, marks
  // it unsettled (site_done false) and launched (the site has it); other fields come from row.
  // Anything else is refused like an illegal transition.
  Result<void> reinstate_attempt(AttemptRow& row, AttemptState to);

  // Progress and checkpoints.
  Result<void> insert_progress(const ProgressSample& sample);
  // The new checkpoint's id; nullopt when it is already known (same job, step and path).
  Result<std::optional<std::int64_t>> insert_checkpoint(const CheckpointRow& row);
  Result<std::optional<CheckpointRow>> latest_checkpoint(JobId job);
  // The latest checkpoint of each of these jobs that has one: one statement for a page.
  Result<std::map<JobId, CheckpointRow>> latest_checkpoints(const std::vector<JobId>& jobs);
  Result<std::vector<CheckpointRow>> checkpoints_of(JobId job);
  // The attempt's checkpoints at one step, newest first: a tiered save's copies (the node's own,
  // then the shared one it drained to) are reported as two lines of the same step. Read through
  // the (job, step, path) index: the cost is that step's rows, not the job's history.
  Result<std::vector<CheckpointRow>> checkpoints_of_attempt_at(JobId job, std::int64_t attempt_id,
                                                               std::int64_t step);
  // The job's checkpoints that still have a copy somewhere (a replica neither deleted nor
  // missing), oldest first, and every replica of those: what replication and retention act on.
  // Read through the index of live copies, so the cost is what is kept, not every checkpoint the
  // job ever saved.
  Result<std::vector<CheckpointRow>> checkpoints_with_copies(JobId job);
  Result<std::vector<ReplicaRow>> replicas_of_checkpoints_with_copies(JobId job);
  // Whether the job ever reported a checkpoint.
  Result<bool> has_checkpoints(JobId job);

  // Checkpoint registry, datasets, copies and transfers (store_data.cpp; issue 5).
  Result<std::optional<CheckpointRow>> checkpoint(std::int64_t id);
  Result<void> set_checkpoint_manifest(std::int64_t id, const nlohmann::json& manifest,
                                       std::int64_t bytes);
  Result<std::int64_t> insert_replica(const ReplicaRow& row);  // id
  Result<void> update_replica(const ReplicaRow& row);
  Result<std::optional<ReplicaRow>> replica(std::int64_t id);
  // Copies of one checkpoint / of one dataset / of every checkpoint of a job / at one cluster.
  Result<std::vector<ReplicaRow>> replicas_of_checkpoint(std::int64_t checkpoint_id);
  Result<std::vector<ReplicaRow>> replicas_of_dataset(const std::string& dataset);
  Result<std::vector<ReplicaRow>> replicas_of_job(JobId job);
  // Marks every live copy on that node's own disk at that cluster missing (the node was lost,
  // and its disk with it): they are never resumed from. How many it marked.
  Result<int> lose_node_copies(const std::string& cluster, const std::string& node,
                               const std::string& detail, Millis now);
  // Copies not deleted, of any object, at one cluster (empty: everywhere): what the audit checks.
  Result<std::vector<ReplicaRow>> live_replicas(const std::string& cluster);

  Result<bool> insert_dataset(const DatasetRow& row);  // false: the name is taken
  Result<std::optional<DatasetRow>> dataset(const std::string& name);
  Result<std::vector<DatasetRow>> datasets();
  Result<void> set_dataset_manifest(const std::string& name, const nlohmann::json& manifest,
                                    std::int64_t bytes);

  Result<std::int64_t> insert_transfer(const TransferRow& row);  // id
  Result<void> update_transfer(const TransferRow& row);
  Result<std::optional<TransferRow>> transfer(std::int64_t id);
  // Newest first; active_only: queued, running, verifying.
  Result<std::vector<TransferRow>> transfers(bool active_only, int limit);
  // Completed copies between two clusters (either direction when both_ways), newest first:
  // the bandwidth that placement's staging estimate uses.
  Result<std::vector<TransferRow>> done_transfers(const std::string& a, const std::string& b,
                                                  int limit);

  // Clusters added to a running server by `orchestrate cluster add` (store.cpp): the clusters
  // document each came in (a clusters file's text), read at start beside the clusters file.
  Result<void> insert_added_cluster(const AddedClusterRow& row);
  Result<std::vector<AddedClusterRow>> added_clusters();

  // Support tickets (store_tickets.cpp).
  Result<std::int64_t> insert_ticket(const TicketRow& row);  // id
  Result<void> update_ticket(const TicketRow& row);
  Result<std::optional<TicketRow>> ticket(std::int64_t id);
  // Newest first: of one cluster (empty: every cluster); open: only open (true) or closed
  // (false) ones, both when unset.
  Result<std::vector<TicketRow>> tickets(const std::string& cluster, std::optional<bool> open,
                                         int limit);
  // Tickets that matter to a window starting at since_ms: opened since, or still open then.
  Result<std::vector<TicketRow>> tickets_since(Millis since_ms);
  Result<std::int64_t> add_ticket_note(const TicketNoteRow& row);
  Result<std::vector<TicketNoteRow>> ticket_notes(std::int64_t ticket_id);

  // Events.
  Result<void> add_event(std::optional<JobId> job, std::optional<int> attempt_no, Millis at,
                         const std::string& kind, const std::string& message);
  Result<std::vector<EventRow>> events_of(JobId job, int limit = 1000);

  // Hot spares (rows.h's SpareRow; store_spares.cpp). Writing one moves the capacity placement
  // sees; ending one (its state no longer live) adds its idle GPU-time to the cluster's totals.
  Result<std::int64_t> add_spare(const SpareRow& row);
  Result<void> update_spare(const SpareRow& row);
  // Burning in, holding or ready, oldest first (the live-spares index).
  Result<std::vector<SpareRow>> live_spares(const std::string& cluster);
  Result<std::optional<SpareRow>> spare_by_token(const std::string& token);
  // The ended spares' totals and the live ones' GPU-time up to `now`.
  Result<SpareTotals> spare_totals(const std::string& cluster, Millis now);

  // Outbox.
  Result<std::int64_t> enqueue(const OutboxRow& row);
  Result<std::optional<OutboxRow>> action(std::int64_t id);
  Result<std::vector<OutboxRow>> pending_actions(const std::string& cluster);
  Result<void> mark_action_done(std::int64_t id, Millis at);
  Result<void> mark_actions_done_for_token(const std::string& token, Millis at);

  // Placement verdicts (the explanation of the latest placement of a job).
  Result<void> replace_verdicts(JobId job, const std::vector<PlacementVerdictRow>& rows);
  Result<std::vector<PlacementVerdictRow>> verdicts_of(JobId job);

 private:
  explicit Store(Db db) : db_(std::move(db)) {}
  JobRow read_job(const Stmt& st);
  static JobRow read_job_listing(const Stmt& st);
  // An attempt started, ended or settled: what placement sees of its cluster moved, and with it
  // the GPUs in use.
  void attempts_moved() {
    ++capacity_epoch_;
    ++gpus_epoch_;
  }
  // A transaction that did not commit: whatever a caller derived from its writes is void.
  void forget_transaction() {
    job_changes_.clear();
    attempts_moved();
  }
  // The attempt's row alone (insert_attempt, launch_attempt).
  Result<AttemptId> add_attempt_row(const AttemptRow& row);
  // Saves the job's mutable fields with state `to`, and its cluster when one is given, refusing
  // an illegal transition from the stored state. `believed` is the state the caller last read:
  // when the store still holds it, the write checks it in the same statement.
  Result<void> write_job(const JobRow& row, JobState to, JobState believed,
                         const std::string* cluster, Millis now);
  // Writes every mutable attempt field, with no transition check.
  Result<void> write_attempt(const AttemptRow& row);
  // Records an "illegal-transition" event for a job or attempt (kind) named who, says so on
  // stderr, and returns the conflict error for the caller.
  Error refuse_transition(std::string_view kind, const std::string& who, std::optional<JobId> job,
                          std::optional<int> attempt_no, Millis at, std::string_view from,
                          std::string_view to);

  Db db_;
  // Specs never change after submit, and parsing one is the costliest part of reading a job.
  std::unordered_map<JobId, std::pair<std::string, JobSpec>> spec_cache_;
  std::vector<JobChange> job_changes_;
  std::uint64_t capacity_epoch_ = 1;
  std::uint64_t gpus_epoch_ = 1;
  std::uint64_t work_epoch_ = 0;
};

}  // namespace orch
