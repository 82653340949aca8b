#pragma once
// The brain: every decision orchestrate makes. It takes one event at a time, changes state in
// one SQLite transaction, and writes the actions it decides (launch, cancel) to the outbox in
// that same transaction, so a crash can never separate a decision from its action. It does no
// I/O of its own besides the store and never blocks on a site; site workers carry out the
// outbox. Tests drive it directly with a FakeClock and check the outbox: no threads, no sleeps.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/brain/brain_event.h"
#include "scheduler/brain/launch_plan.h"
#include "scheduler/brain/waiting_queue.h"
#include "scheduler/common/clock.h"
#include "scheduler/data/replication_plan.h"
#include "scheduler/health/mfu_watch.h"
#include "scheduler/model/manifest_action.h"
#include "scheduler/placement/pipeline.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/store.h"

namespace orch {

class Brain {
 public:
  Brain(Store& store, const Clock& clock, std::vector<ClusterSpec> clusters,
        PlacementPipeline pipeline = PlacementPipeline::standard());

  // Registers the configured clusters in the store. Call once before handle().
  Result<void> start();

  // Handles one event in one transaction. Errors are for the caller (bad command); a failed
  // transaction changes nothing.
  Result<BrainReply> handle(const BrainEvent& event);

  const std::vector<ClusterSpec>& clusters() const { return clusters_; }
  // Moves when an event wrote work for the workers (Store::work_epoch).
  std::uint64_t work_epoch() const { return store_.work_epoch(); }
  const ClusterSpec* cluster_spec(const std::string& name) const;

 private:
  Result<BrainReply> on(const SubmitJob& e);
  Result<BrainReply> on(const CancelJob& e);
  Result<BrainReply> on(const LaunchCompleted& e);
  Result<BrainReply> on(const CancelCompleted& e);
  Result<BrainReply> on(const AttemptObserved& e);
  Result<BrainReply> attempt_seen_running(AttemptRow& a, JobRow& job, bool running);
  Result<BrainReply> attempt_exited(AttemptRow& a, JobRow& job, const AttemptObserved& e);
  Result<BrainReply> on(const InventoryObserved& e);
  Result<BrainReply> on(const SiteUnreachable& e);
  Result<BrainReply> on(const SiteReachable& e);
  Result<BrainReply> on(const ProbeCompleted& e);
  Result<BrainReply> on(const StartBurnIn& e);
  Result<BrainReply> on(const SetNodeState& e);
  Result<BrainReply> on(const ManifestCompleted& e);
  Result<BrainReply> on(const RemoveCompleted& e);
  Result<BrainReply> on(const TransferProgressed& e);
  Result<BrainReply> on(const TransferFinished& e);
  Result<BrainReply> on(const RegisterDataset& e);
  Result<BrainReply> on(const ReplicateData& e);
  Result<BrainReply> on(const StartAudit& e);
  Result<BrainReply> on(const Tick& e);

  // Places the waiting jobs whose backoff has passed (resuming first, then oldest first) and
  // that a change since their last try could have unblocked (waiting_queue.h).
  Result<void> place_waiting_jobs();
  // Tries to place one job now; leaves it waiting with a reason when nothing fits (and notes
  // that it is blocked at the current capacity version).
  Result<void> try_place(JobRow& job);
  // Writes what plan_launch decided: the attempts, the outbox row, the job's state, the event.
  Result<void> record_launch(JobRow& job, LaunchPlan plan, std::vector<ClusterView>& views);
  // The clusters as placement sees them: rebuilt from the store only when its capacity epoch
  // moved or the history was refreshed. A change in what the filters look at bumps
  // capacity_version_.
  Result<std::vector<ClusterView>*> cluster_views();
  Result<std::vector<ClusterView>> read_cluster_views();
  // Fingerprints views_ and bumps capacity_version_ when the fingerprint changed.
  void note_capacity();
  // Could any cluster hold a job of this size at all, were it empty of other waiting jobs'
  // wishes? A necessary condition of every filter, cheap enough to ask of every waiting job.
  bool may_fit(const JobChange& job, const std::vector<ClusterView>& views) const;
  // After a commit: the queue of waiting jobs follows what the transaction wrote.
  void after_commit(bool committed);
  // An attempt has ended (its row already says how): decide what the job does next.
  Result<void> after_attempt_end(const AttemptRow& attempt);
  Result<void> end_attempt(AttemptRow& attempt, ExitCause cause, const std::string& detail);
  Result<void> ingest_reports(AttemptRow& attempt, const JobRow& job,
                              const std::vector<ProgressLine>& reports);
  Result<void> expire_unreachable_sites();
  // The site confirmed an ended attempt is gone: stop watching it.
  Result<BrainReply> settle(AttemptRow& attempt);
  // Ends what runs on clusters no longer in the configuration: nobody can watch them.
  Result<void> forget_removed_clusters();
  Result<void> request_cancel(AttemptRow& attempt, const std::string& why);

  // Duplicates (brain_reconcile.cpp). `stale` ended (the brain gave up on it) but its site
  // still runs it (running) or queues it: keep exactly one copy of the job, say why in a
  // "reconciled" event, and stop the other.
  Result<void> reconcile_stale(AttemptRow& stale, bool running, JobRow& job);
  Result<void> reconcile_duplicate(AttemptRow& stale, bool running, AttemptRow& live, JobRow& job);
  // No other attempt carries the job, which waits to resume: the stale one may take it back.
  Result<void> reconcile_waiting(AttemptRow& stale, bool running, JobRow& job);
  // Makes the stale attempt the job's own again (attempt -> `to`, job -> placed/running).
  Result<void> reinstate(AttemptRow& stale, AttemptState to, JobRow& job, const std::string& why);
  // Keeps the job as it is and stops the stale attempt.
  Result<void> drop_stale(AttemptRow& stale, const std::string& why, const std::string& cancel_why);

  // Nodes (brain_observe.cpp): the node ledger. An entry of a failure kind may quarantine the
  // node (brain_health.cpp).
  Result<void> node_event(const std::string& cluster, const std::string& node,
                          const std::string& kind, const std::string& message,
                          const AttemptRow* attempt = nullptr);
  Result<void> record_health(const std::string& cluster, SiteHealth health);

  // Health (brain_health.cpp): quarantine, burn-in, hangs, MFU.
  Result<void> judge_node_after_failure(const std::string& cluster, const std::string& node);
  Result<void> set_standing(NodeRow& node, NodeState to, const std::string& reason, bool counts);
  Result<void> start_burn_in(ClusterRow& cluster, const std::string& why);
  Result<void> start_due_burn_ins();
  Result<void> start_release_probes();
  Result<void> judge_burn_in_round(ClusterRow& cluster, const ProbeCompleted& e);
  Result<void> judge_release_round(const ProbeCompleted& e);
  Result<void> detect_hangs();
  // The failure classifier's node verdicts: ledger entries for the nodes a log implicates.
  Result<void> implicate_nodes(const AttemptRow& attempt, ExitCause cause,
                               const std::vector<std::string>& named_nodes,
                               const std::string& evidence);
  // The MFU samples of one observation (with their per-rank times), in step order.
  struct MfuSample {
    double mfu = 0;
    const std::vector<RankStepTime>* ranks = nullptr;
  };
  Result<void> watch_mfu(AttemptRow& attempt, const JobRow& job,
                         const std::vector<MfuSample>& samples);
  Result<void> watch_one_sample(AttemptRow& attempt, MfuWatchState& state,
                                std::vector<std::string>& suspects, const MfuSample& sample,
                                const MfuWatchPolicy& policy);
  const std::map<std::string, ClusterHistory>& histories();

  // Data (brain_data.cpp: registry, manifests, audits, data commands; brain_transfer.cpp:
  // replication, transfers, throttling, staging).
  static bool lists_storage_at(const ClusterSpec* spec) {
    return spec != nullptr && spec->lists_storage();
  }
  Result<void> register_checkpoint(const AttemptRow& attempt, std::int64_t checkpoint_id,
                                   const std::string& path);
  // Asks the cluster's worker to list a copy, for a purpose; with hash_files given only those
  // are hashed, else as `hash` says (every file, or sizes only).
  Result<void> request_manifest(const ReplicaRow& replica, ManifestPurpose purpose,
                                std::optional<std::int64_t> transfer_id = std::nullopt,
                                const std::vector<std::string>& hash_files = {},
                                ManifestRequest::Hash hash = ManifestRequest::Hash::all);
  // Transfers still to copy from this copy (it was found gone or bad): cancelled.
  Result<void> cancel_transfers_from(const ReplicaRow& source, const std::string& why);
  Result<void> on_registered(ReplicaRow& replica, const ManifestCompleted& e);
  Result<void> on_verified(ReplicaRow& replica, const ManifestCompleted& e);
  Result<void> on_copy_mismatch(ReplicaRow& replica, std::optional<TransferRow>& transfer,
                                std::optional<JobId> job, const std::string& name,
                                const std::string& problem);
  Result<void> on_audited(ReplicaRow& replica, const ManifestCompleted& e);
  // A copy found gone or different (audit, verification, pre-launch check).
  Result<void> replica_failed(ReplicaRow& replica, ReplicaState to, const std::string& why,
                              const std::string& found_by);
  Result<void> start_due_audits(bool force, const std::string& only_cluster);
  Result<void> note_resume_choice(AttemptRow& attempt, const ResumeChoice& choice);
  // The registered manifest of a copy's object (checkpoint or dataset); nullopt if not known.
  Result<std::optional<Manifest>> registered_manifest(const ReplicaRow& replica);
  // Human name of a copy's object: "checkpoint at step 40 of job 3", "dataset imagenet".
  Result<std::string> object_name(const ReplicaRow& replica);
  // Job a copy's object belongs to (checkpoints only).
  Result<std::optional<JobId>> job_of(const ReplicaRow& replica);

  Result<void> replicate_job(JobId job);
  Result<void> audit_transfer_source(const TransferRow& transfer);
  // replicate_job's steps: what plan_replication reads, the copies it asks for, the deletions.
  Result<ReplicationInput> replication_input(const ReplicationSpec& policy,
                                             const std::vector<CheckpointRow>& ckpts,
                                             const std::vector<ReplicaRow>& copies,
                                             const std::vector<TransferRow>& active);
  Result<void> start_replica_copies(JobId job, const ReplicationPlan& plan,
                                    const std::vector<CheckpointRow>& ckpts,
                                    const std::vector<ReplicaRow>& copies,
                                    const std::vector<TransferRow>& active);
  Result<void> delete_replicas(JobId job, const ReplicationPlan& plan,
                               const std::vector<CheckpointRow>& ckpts,
                               std::vector<ReplicaRow> copies);
  Result<void> sweep_replication();
  Result<std::int64_t> start_transfer(const ReplicaRow& source, const std::string& to,
                                      const std::string& dst_path, const std::string& why,
                                      std::int64_t bytes);
  Result<void> throttle_transfers();
  Result<std::set<std::string>> usable_sites();
  Result<double> bandwidth_between(const std::string& a, const std::string& b);
  // Candidates to resume from at `cluster`, newest first (verified or not yet listed copies).
  Result<std::vector<ResumeCandidate>> resume_candidates_at(JobId job, const std::string& cluster);
  // What the job still needs at `cluster` before it can launch there (datasets, the newest
  // checkpoint); starts the copies. Empty: ready. Fills the dataset variables into env.
  Result<std::vector<std::string>> stage_for(const JobRow& job, const std::string& cluster,
                                             std::map<std::string, std::string>& env);
  // When a newer verified checkpoint than the best candidate at `cluster` is held at another
  // usable site, starts (or waits for) its copy there; returns why the job waits, if it does.
  Result<std::optional<std::string>> stage_checkpoint(const JobRow& job, const std::string& cluster,
                                                      const std::vector<ResumeCandidate>& here);
  // Seconds to stage the job's datasets at each configured cluster (placement's term).
  Result<std::map<std::string, double>> staging_estimates(const JobSpec& spec);
  Result<void> event(JobId job, std::optional<int> attempt_no, const std::string& kind,
                     const std::string& message);

  Store& store_;
  const Clock& clock_;
  std::vector<ClusterSpec> clusters_;
  PlacementPipeline pipeline_;
  // Derived from the store, recomputed now and then (placement reads it on every tick).
  std::map<std::string, ClusterHistory> histories_;
  std::optional<Millis> histories_at_ms_;
  std::map<std::string, Millis> last_audit_ms_;  // per cluster
  std::set<std::int64_t> auditing_;              // copies with an audit in flight
  Millis last_sweep_ms_ = 0;

  // Placement state kept between events (placement rounds cost what changed, not the queue).
  WaitingQueue waiting_;
  bool waiting_loaded_ = false;
  std::vector<std::pair<JobId, std::uint64_t>> blocked_marks_;  // this event's, until commit
  std::vector<ClusterView> views_;
  std::optional<std::uint64_t> views_epoch_;
  std::optional<Millis> views_history_at_;
  std::string capacity_fingerprint_;
  std::uint64_t capacity_version_ = 0;
};

}  // namespace orch
