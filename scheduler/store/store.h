#pragma once
// The state of orchestrate in one SQLite file (WAL, foreign keys, versioned migrations), and the
// one way to change it. Store is the writer's connection: the brain owns one and writes through
// it inside transaction(); the migrations and the composition roots (the server, the demo, the
// simulator) open it. Everyone else reads through a StoreReader (store_reader.h), which every
// Store also is. Pass ":memory:" for a private in-memory store (tests).
//
// Illegal state transitions are refused: the row is left as it was, an "illegal-transition"
// event is recorded, and ErrorKind::conflict is returned.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/store/rows.h"
#include "scheduler/store/store_reader.h"

namespace orch {

class Store : public StoreReader {
 public:
  // Opens (creating when missing) and migrates the database at path.
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
  // Grows with every write of a transfer row and with every rollback: equal epochs mean what
  // was read of the transfers (the bandwidth between two sites) is still current.
  std::uint64_t transfers_epoch() const { return transfers_epoch_; }
  // The connection itself (sqlite_db.h), for the migrations, the WAL checkpointer and the
  // store's own tests.
  Db& db() { return db_; }

  // Clusters and nodes. upsert_node writes what the site reports (gpus, healthy, reason, seen,
  // busy) and keeps the node's standing; set_node_standing writes the standing (state,
  // quarantines, reasons, probe).
  // Registers a cluster the first time it is configured (true), with its admission state and
  // the time it joined; a known cluster is left as it is (false).
  Result<bool> ensure_cluster(const std::string& name, Admission admission = Admission::active,
                              Millis now = 0);
  Result<void> update_cluster(const ClusterRow& row);
  Result<void> upsert_node(const NodeRow& row);
  // Every node of the cluster was listed at at_ms (seen_ms): one statement for a whole site's
  // listing, where only the nodes whose report changed are upserted.
  Result<void> mark_nodes_seen(const std::string& cluster, Millis at_ms);
  Result<void> set_node_standing(const NodeRow& row);
  // One more failure under work on the node (NodeRow::work_failures; the brain calls it once per
  // incident). Its exposure (work_gpu_hours) grows by itself as attempts on it end.
  Result<void> add_node_work_failure(const std::string& cluster, const std::string& node);
  // Probe results, site reachability, MFU history and the node ledger.
  Result<void> add_probe(const ProbeRow& row);
  Result<void> add_health_log(const HealthLogRow& row);
  // Adds `samples` steps to the attempt's minute bucket: their work (the sum of each step's MFU
  // x its step time) and the step time they took (MfuBucketRow).
  Result<void> add_mfu_samples(AttemptId attempt, const std::string& cluster,
                               const std::string& nodes, Millis at_ms, double work, double time_s,
                               int samples);
  Result<std::int64_t> add_node_event(const NodeEventRow& row);
  // Jobs.
  Result<JobId> insert_job(const JobRow& row);
  // Changes state (refusing illegal transitions) and saves the other mutable fields.
  Result<void> update_job(const JobRow& row, Millis now);
  Result<void> set_job_state(JobRow& row, JobState to, Millis now);
  // Attempts.
  Result<AttemptId> insert_attempt(const AttemptRow& row);
  // A launch in one go: inserts the attempt (as insert_attempt does) and moves its job to `to`
  // (as set_job_state does, with job's other mutable fields), the job's cluster set to the
  // attempt's: the job's row is written once.
  Result<AttemptId> launch_attempt(JobRow& job, const AttemptRow& attempt, JobState to, Millis now);
  Result<void> update_attempt(const AttemptRow& row);
  Result<void> set_attempt_state(AttemptRow& row, AttemptState to, Millis now);
  // The narrow way back from exited (see can_reinstate): only an attempt stored as exited with
  // cause site_down, to running or launching. Clears the cause, exit status and end time, marks
  // it unsettled (site_done false) and launched (the site has it); other fields come from row.
  // Anything else is refused like an illegal transition.
  Result<void> reinstate_attempt(AttemptRow& row, AttemptState to);
  // Progress and checkpoints.
  // Adds one step to the attempt's series (store_series.cpp): an upsert into its bucket
  // step / width. When the attempt's buckets from first_step (its first reported step) to this
  // one would pass kSeriesBucketCap, its width doubles (as often as needed) and its buckets are
  // merged in one statement: O(1) amortised per step, at most kSeriesBucketCap rows per attempt.
  Result<void> add_series_step(AttemptId attempt, std::int64_t first_step, const SeriesStep& step);
  // The new checkpoint's id; nullopt when it is already known (same job, step and path).
  Result<std::optional<std::int64_t>> insert_checkpoint(const CheckpointRow& row);
  Result<void> set_checkpoint_manifest(std::int64_t id, const nlohmann::json& manifest,
                                       std::int64_t bytes);
  // Checkpoint registry, datasets, copies and transfers (store_data.cpp; issue 5).
  Result<std::int64_t> insert_replica(const ReplicaRow& row);  // id
  Result<void> update_replica(const ReplicaRow& row);
  // Marks every live copy on that node's own disk at that cluster missing (the node was lost,
  // and its disk with it): they are never resumed from. How many it marked.
  Result<int> lose_node_copies(const std::string& cluster, const std::string& node,
                               const std::string& detail, Millis now);
  Result<bool> insert_dataset(const DatasetRow& row);  // false: the name is taken
  // Issue 43: false when this save's stall was already recorded (store_io_stalls.cpp).
  Result<bool> add_io_stall(const IoStallRow& row);
  Result<void> set_dataset_manifest(const std::string& name, const nlohmann::json& manifest,
                                    std::int64_t bytes);
  Result<std::int64_t> insert_transfer(const TransferRow& row);  // id
  Result<void> update_transfer(const TransferRow& row);
  // A cluster `orchestrate cluster add` brought, with its document (store.cpp).
  Result<void> insert_added_cluster(const AddedClusterRow& row);
  // Support tickets (store_tickets.cpp).
  Result<std::int64_t> insert_ticket(const TicketRow& row);  // id
  Result<void> update_ticket(const TicketRow& row);
  Result<std::int64_t> add_ticket_note(const TicketNoteRow& row);
  // Team budgets (issue 45, store_budgets.cpp): records that the team's threshold (80, 100) was
  // announced for the month ("2026-12"); false when it already was (the webhook fires once).
  Result<bool> add_budget_alert(const std::string& month, const std::string& team, int threshold,
                                Millis at_ms);
  // Sets the job's spec priority (a team past its budget with `over: <class>`) and writes the
  // row's other mutable fields as update_job does.
  Result<void> set_job_priority(JobRow& row, int priority, Millis now);
  // Events.
  Result<void> add_event(std::optional<JobId> job, std::optional<int> attempt_no, Millis at,
                         const std::string& kind, const std::string& message);
  // Hot spares (rows.h's SpareRow; store_spares.cpp). Writing one moves the capacity placement
  // sees; ending one (its state no longer live) adds its idle GPU-time to the cluster's totals.
  Result<std::int64_t> add_spare(const SpareRow& row);
  Result<void> update_spare(const SpareRow& row);
  // Outbox.
  Result<std::int64_t> enqueue(const OutboxRow& row);
  Result<void> mark_action_done(std::int64_t id, Millis at);
  Result<void> mark_actions_done_for_token(const std::string& token, Millis at);
  // Placement verdicts (the explanation of the latest placement of a job).
  Result<void> replace_verdicts(JobId job, const std::vector<PlacementVerdictRow>& rows);
  // The running cost tally (issue 45, store_costs.cpp): adds each row to its month and to the
  // all-time totals (kCostAllTime). Rows of zero are skipped.
  Result<void> add_costs(const std::vector<CostTallyRow>& rows);
  // What an ended attempt cost, by month, cluster and kind (team left empty: the store fills
  // the job's); the brain's (lifecycle/attempt_cost.h over its clusters' prices). Set, every
  // write of an attempt that ended or was ended moves the tally by the difference its new row
  // makes, in the same transaction: its end adds it, steps lost recorded later move them from
  // useful to redone, a reinstatement takes it back. Unset: no tally is kept.
  using AttemptPricer = std::function<std::vector<CostTallyRow>(const AttemptRow&)>;
  void set_attempt_pricer(AttemptPricer pricer) { attempt_pricer_ = std::move(pricer); }

 private:
  explicit Store(std::unique_ptr<Db> db);
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
    ++transfers_epoch_;
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
  // An attempt that ran settles at its site: its GPUs on each of its nodes go into the node's
  // gpus_ours_gone until the site lists its nodes again (issue 42).
  Result<void> note_gone_from_nodes(const AttemptRow& a);
  // An attempt that ran ended (sign 1) or was brought back from its end (sign -1): each of its
  // nodes' work_gpu_hours moves by its GPUs there times its running time (issue 43).
  Result<void> add_work_exposure(const AttemptRow& a, Millis ended_ms, double sign);
  // Moves the cost tally from what `before` (the stored row, if it had ended) added to what
  // `after` adds (store_costs.cpp); nothing without a pricer.
  Result<void> tally_attempt_cost(const std::optional<AttemptRow>& before,
                                  const std::optional<AttemptRow>& after);
  // Records an "illegal-transition" event for a job or attempt (kind) named who, says so on
  // stderr, and returns the conflict error for the caller.
  Error refuse_transition(std::string_view kind, const std::string& who, std::optional<JobId> job,
                          std::optional<int> attempt_no, Millis at, std::string_view from,
                          std::string_view to);

  AttemptPricer attempt_pricer_;
  std::vector<JobChange> job_changes_;
  std::uint64_t capacity_epoch_ = 1;
  std::uint64_t gpus_epoch_ = 1;
  std::uint64_t work_epoch_ = 0;
  std::uint64_t transfers_epoch_ = 1;
};

}  // namespace orch
