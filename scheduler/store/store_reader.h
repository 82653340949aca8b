#pragma once
// The read side of the state database: every query of orchestrate's state, on one connection
// of its own. Site, storage, transfer and webhook workers, the REST backend and the simulator's
// readers hold a StoreReader, opened query_only: SQLite itself refuses a write on it, and the
// type has no write to call (tests/unit/store/planted_write.cpp proves a write does not
// compile). The writes are Store's (store.h), which only the brain, the migrations and the
// composition roots hold. Queries are split by area, as the store_*.cpp files are.
//
// A reader is used by one thread at a time (connections are opened NOMUTEX); WAL lets any
// number of them read beside the writer.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/model/held_gpus.h"
#include "scheduler/model/preemption_candidate.h"
#include "scheduler/model/team_use.h"
#include "scheduler/store/rows.h"

namespace orch {

// The SQLite connection and its statements (sqlite_db.h): only scheduler/store's .cpp files see
// them.
class Db;
class Stmt;

class StoreReader {
 public:
  // A read-only connection to the database at path, which the writer (Store::open) has already
  // brought to the current schema: refused when it has not, rather than read wrongly.
  static Result<std::unique_ptr<StoreReader>> open(const std::string& path);
  StoreReader(const StoreReader&) = delete;
  StoreReader& operator=(const StoreReader&) = delete;
  virtual ~StoreReader();

  // Clusters.
  Result<std::vector<ClusterRow>> clusters();
  Result<std::optional<ClusterRow>> cluster(const std::string& name);

  // Nodes.
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
  // The node's ledger entries of the given kinds at or after since_ms, oldest first.
  Result<std::vector<NodeEventRow>> node_events_since(const std::string& cluster,
                                                      const std::string& node,
                                                      const std::vector<std::string>& kinds,
                                                      Millis since_ms);
  // Every ledger entry of these kinds at or after since_ms, all clusters (scorecard).
  Result<std::vector<NodeEventRow>> node_events_of_kinds(const std::vector<std::string>& kinds,
                                                         Millis since_ms);

  // Probe results, newest first; node empty: the whole cluster.
  Result<std::vector<ProbeRow>> probes(const std::string& cluster, const std::string& node,
                                       int limit);

  // Site reachability history.
  Result<std::vector<HealthLogRow>> health_log(Millis since_ms);

  // MFU history: one attempt's buckets, or (attempt 0) every bucket of a cluster since since_ms;
  // oldest first.
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
    std::optional<double> mfu;  // null while flagged (AttemptRow::mfu_flag)
    double mfu_time_s = 0;      // the step time its MFU is measured over (step_time_total)
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
  // The same of the checkpoints after after_id only, each with its id and time: placement's
  // history keeps its window of save times between refreshes (cluster_history.h), as a
  // checkpoint's save time and attempt never change and its row is never deleted.
  struct SaveTimeAt {
    std::int64_t id = 0;
    Millis at_ms = 0;
    std::string cluster;
    double save_time_s = 0;
  };
  Result<std::vector<SaveTimeAt>> checkpoint_save_times_after(std::int64_t after_id,
                                                              Millis since_ms);
  // Issue 43 (store_io_stalls.cpp): the save times the job's newest checkpoints reported (at
  // most 50), and the cluster of every io stall at or after since_ms (one per save).
  Result<std::vector<double>> job_save_times(JobId job);
  Result<std::vector<std::string>> io_stall_clusters_since(Millis since_ms);
  // The node ledger, newest first, at most `limit` entries, of the whole cluster or of one
  // node.
  Result<std::vector<NodeEventRow>> node_events(const std::string& cluster,
                                                const std::optional<std::string>& node, int limit);

  // Jobs.
  Result<std::optional<JobRow>> job(JobId id);
  // The newest job of this name (issue 45: `after:` names a job), if any.
  Result<std::optional<JobId>> newest_job_named(const std::string& name);
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
  // resources (nodes, gpus_per_node), priority, priority_class and sweep_point are filled, and
  // the stored document, when asked, goes to *spec as JSON. The brain reads whole jobs with
  // job().
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

  // The running cost tally (issue 45, store_costs.cpp): its rows of the months from_month to
  // to_month ("2026-12", both included), and the all-time totals (month kCostAllTime). Each
  // costs the rows it returns (months x teams x clusters x kinds), never the history.
  Result<std::vector<CostTallyRow>> cost_tally(const std::string& from_month,
                                               const std::string& to_month);
  Result<std::vector<CostTallyRow>> cost_totals();
  // The jobs with an attempt that ended at or after since_ms (the attempts_ended index).
  Result<std::vector<JobId>> jobs_with_attempts_ended_since(Millis since_ms);
  // Team budgets (issue 45, store_budgets.cpp): the (team, threshold) announced in the month.
  Result<std::vector<std::pair<std::string, int>>> budget_alerts(const std::string& month);
  // Attempts.
  Result<std::optional<AttemptRow>> attempt_by_token(const std::string& token);
  Result<std::vector<AttemptRow>> attempts_of(JobId job);
  // The attempts of each of these jobs, in attempt order: one statement for a page of jobs.
  Result<std::map<JobId, std::vector<AttemptRow>>> attempts_of_jobs(const std::vector<JobId>& jobs);
  // with_nodes false: each row's node list left empty (a gang of thousands is not expanded),
  // for a caller that reads neither it nor writes the row back (here and in watched_attempts).
  Result<std::vector<AttemptRow>> live_attempts(const std::optional<std::string>& cluster,
                                                bool with_nodes = true);
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
  Result<std::vector<AttemptRow>> watched_attempts(const std::string& cluster,
                                                   bool with_nodes = true);
  // GPUs held by live or unsettled attempts, per cluster (clusters with none are absent), and
  // how many of them by attempts the site has started.
  Result<std::map<std::string, GpusInUse>> gpus_in_use();

  // Progress and checkpoints.
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

  // The run as a series (store_series.cpp, issue 41). The job's attempts that have steps, in
  // attempt order, with where their buckets lie (two index seeks per attempt).
  Result<std::vector<SeriesSpan>> series_spans(JobId job);
  // One attempt's points: its buckets from first_bucket on, `group` consecutive ones merged into
  // each point (min of mins, max of maxes), in step order. Reads its buckets only (at most
  // kSeriesBucketCap), whatever the number of steps.
  Result<std::vector<SeriesPoint>> series_points(AttemptId attempt, std::int64_t first_bucket,
                                                 std::int64_t group);
  // The job's checkpoints as a series marks them: one per step and attempt, in step order.
  Result<std::vector<SeriesCheckpoint>> series_checkpoints(JobId job);

  // Checkpoint registry, datasets, copies and transfers (store_data.cpp; issue 5).
  Result<std::optional<CheckpointRow>> checkpoint(std::int64_t id);
  Result<std::optional<ReplicaRow>> replica(std::int64_t id);
  // Copies of one checkpoint / of one dataset / of every checkpoint of a job / at one cluster.
  Result<std::vector<ReplicaRow>> replicas_of_checkpoint(std::int64_t checkpoint_id);
  Result<std::vector<ReplicaRow>> replicas_of_dataset(const std::string& dataset);
  Result<std::vector<ReplicaRow>> replicas_of_job(JobId job);
  // Copies not deleted, of any object, at one cluster (empty: everywhere): what the audit checks.
  Result<std::vector<ReplicaRow>> live_replicas(const std::string& cluster);

  Result<std::optional<DatasetRow>> dataset(const std::string& name);
  Result<std::vector<DatasetRow>> datasets();

  Result<std::optional<TransferRow>> transfer(std::int64_t id);
  // Newest first; active_only: queued, running, verifying.
  Result<std::vector<TransferRow>> transfers(bool active_only, int limit);
  // A page of the transfers list (issue 42), newest first: all false keeps the active and failed
  // ones (from an index of their own); before_id: only older ones. Reads `limit` rows, however
  // long the history.
  Result<std::vector<TransferRow>> transfer_page(bool all, std::optional<std::int64_t> before_id,
                                                 int limit);
  // Bytes copied in each minute (ms / 60000) from from_minute on, oldest first; minutes with
  // none are left out. A week is kept.
  Result<std::vector<std::pair<std::int64_t, std::int64_t>>> transfer_minutes(
      std::int64_t from_minute);
  // Transfers of one path from one cluster to another, any state, newest first (the job's code
  // staged from the server's code store to a site, issue 40), and every transfer from a cluster.
  Result<std::vector<TransferRow>> transfers_from_to(const std::string& src_cluster,
                                                     const std::string& dst_cluster,
                                                     const std::string& dst_path, int limit);
  Result<std::vector<TransferRow>> transfers_from(const std::string& src_cluster, int limit);
  // Completed copies between two clusters (either direction when both_ways), newest first:
  // the bandwidth that placement's staging estimate uses.
  Result<std::vector<TransferRow>> done_transfers(const std::string& a, const std::string& b,
                                                  int limit);

  // Clusters added to a running server by `orchestrate cluster add`: the clusters document
  // each came in (a clusters file's text), read at start beside the clusters file.
  Result<std::vector<AddedClusterRow>> added_clusters();

  // Support tickets (store_tickets.cpp).
  Result<std::optional<TicketRow>> ticket(std::int64_t id);
  // Newest first: of one cluster (empty: every cluster); open: only open (true) or closed
  // (false) ones, both when unset.
  Result<std::vector<TicketRow>> tickets(const std::string& cluster, std::optional<bool> open,
                                         int limit);
  // Tickets that matter to a window starting at since_ms: opened since, or still open then.
  Result<std::vector<TicketRow>> tickets_since(Millis since_ms);
  Result<std::vector<TicketNoteRow>> ticket_notes(std::int64_t ticket_id);

  // Events.
  Result<std::vector<EventRow>> events_of(JobId job, int limit = 1000);

  // Hot spares (rows.h's SpareRow; store_spares.cpp): burning in, holding or ready, oldest first
  // (the live-spares index).
  Result<std::vector<SpareRow>> live_spares(const std::string& cluster);
  Result<std::optional<SpareRow>> spare_by_token(const std::string& token);
  // The ended spares' totals and the live ones' GPU-time up to `now`.
  Result<SpareTotals> spare_totals(const std::string& cluster, Millis now);

  // Outbox.
  Result<std::optional<OutboxRow>> action(std::int64_t id);
  Result<std::vector<OutboxRow>> pending_actions(const std::string& cluster);

  // Placement verdicts (the explanation of the latest placement of a job).
  Result<std::vector<PlacementVerdictRow>> verdicts_of(JobId job);

 protected:
  explicit StoreReader(std::unique_ptr<Db> db);
  JobRow read_job(const Stmt& st);
  static JobRow read_job_listing(const Stmt& st);

  std::unique_ptr<Db> conn_;
  Db& db_;  // *conn_: what every query runs on
  // Specs never change after submit, and parsing one is the costliest part of reading a job.
  std::unordered_map<JobId, std::pair<std::string, JobSpec>> spec_cache_;
};

}  // namespace orch
