#pragma once
// The brain's health part (issue 4): the node ledger and each node's standing (quarantine,
// release probes, retirement), burn-in rounds, the failure evidence that implicates nodes, the
// MFU watch and stragglers, and each cluster's history for placement. The rules are pure
// functions in scheduler/health; this part applies them to the store in the brain's
// transaction. It never places a job: Brain places after the events that may free capacity.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/brain/brain_core.h"
#include "scheduler/brain/brain_event.h"
#include "scheduler/brain/cluster_history.h"
#include "scheduler/health/burn_in.h"
#include "scheduler/health/mfu_watch.h"
#include "scheduler/health/quarantine.h"

namespace orch {

// A probe round of one cluster's burn-in settings (what it measures, for how long) under
// `token`; every node unless nodes are added. Cluster burn-ins, release checks and hot spares'
// burn-ins (spare_pool.h) all run it.
ProbeRequest burn_in_probe(const ClusterSpec& spec, std::string token);

// The GPU parts of that round from the cluster's burn_in.gpu (issue 43): none without the
// section; with it, the count to expect is the cluster's gpus_per_node (unless nvidia_smi is
// none).
GpuProbeOptions gpu_probe_options(const ClusterSpec& spec);

class HealthJudge : BrainPart {
 public:
  explicit HealthJudge(BrainCore& core) : BrainPart(core) {}

  // A person quarantines or releases a node (not_found names the cluster's nodes).
  Result<BrainReply> on(const SetNodeState& e);
  // A person starts a burn-in round (conflict while one runs).
  Result<BrainReply> on(const StartBurnIn& e);
  // A burn-in or release probe round came back: judge each node.
  Result<BrainReply> on(const ProbeCompleted& e);
  // Burn-in's fabric step came back (health_fabric.cpp): a slow node quarantined, a slow pair
  // recorded on both nodes' ledgers, the cluster admitted.
  Result<BrainReply> on(const FabricCompleted& e);
  // The site listed its nodes: the ledger records each change of health.
  Result<BrainReply> on(const InventoryObserved& e);

  // One ledger entry; an entry of a failure kind may take the node out of service.
  Result<void> node_event(const std::string& cluster, const std::string& node,
                          const std::string& kind, const std::string& message,
                          const AttemptRow* attempt = nullptr);
  // The cluster's health log (its reachability over time).
  // A cluster waiting in pending-delivery has arrived (`how`: what showed it): it goes on to
  // burn-in (pending) or active, with its delivery time kept and said against the promise.
  Result<void> mark_delivered(ClusterRow& cluster, const std::string& how);
  Result<void> record_health(const std::string& cluster, SiteHealth health);
  // The failure classifier's node verdicts: ledger entries for the nodes a failure implicates.
  Result<void> implicate_nodes(const AttemptRow& attempt, ExitCause cause,
                               const std::vector<std::string>& named_nodes,
                               const std::string& evidence);
  // The MFU samples of one observation (with their per-rank times), in step order: each step's
  // MFU (nullopt when it is no measurement: lifecycle/mfu.h, counted_mfu) over its step time.
  struct MfuSample {
    std::optional<double> mfu;
    double seconds = 0;
    const std::vector<RankStepTime>* ranks = nullptr;
  };
  // Judges the attempt's MFU (attempt.mfu, work over time) first: above 100% or below 0 it is a
  // misconfiguration, flagged on the attempt (mfu_flag, one `mfu-misconfigured` event for the
  // job) and its MFU kept null from then on, so that no median, scorecard, placement or bucket
  // counts it. Then stores the samples' work and time in the minute's bucket, and records drops,
  // recoveries and stragglers (the attempt's watch state is updated in `attempt`; the caller
  // writes the attempt).
  // Nodes that these samples confirmed stragglers (mfu_watch.h, tally_stragglers) go into
  // *confirmed.
  Result<void> watch_mfu(AttemptRow& attempt, const JobRow& job,
                         const std::vector<MfuSample>& samples,
                         std::vector<std::string>* confirmed);
  // A hot spare's burn-in round (one node; spare_pool.h) came back: the node's verdict on its
  // own checks, recorded as a probe and in the node's ledger; a node that failed is taken out of
  // service as a failed burn-in would. A round that failed as a whole fails the spare without
  // blaming the node.
  Result<NodeProbeVerdict> judge_spare_burn_in(const ProbeCompleted& e, const std::string& node);
  // Tick: burn-in of clusters that joined, release probes of nodes whose cool-down passed.
  Result<void> start_due_burn_ins();
  Result<void> start_release_probes();

  // What the store knows of each cluster (placement's scores), recomputed at most every
  // kHistoryRefreshMs; histories_at() says when it last was.
  const std::map<std::string, ClusterHistory>& histories();
  std::optional<Millis> histories_at() const { return histories_at_ms_; }
  // After each event: a rolled-back one may have read rows that are gone (the history's save
  // times are read again in full at the next refresh).
  void after_commit(bool committed) {
    if (committed) return;
    save_times_.reset();
    listed_.clear();
  }

 private:
  // A node's standing as the rules take it.
  static NodeHealth health_of(const NodeRow& node);
  Result<void> judge_node_after_failure(const std::string& cluster, const std::string& node);
  // A fatal GPU fault (issue 43): an active node quarantined at once (quarantine.h).
  Result<void> put_out_at_once(const std::string& cluster, const std::string& node,
                               const std::string& why);
  // A hang: "hang-seen" on each node, or "hang" (which counts) on a node that hung before.
  Result<void> note_hang(const AttemptRow& attempt, const std::string& evidence);
  Result<void> set_standing(NodeRow& node, NodeState to, const std::string& reason, bool counts);
  Result<void> start_burn_in(ClusterRow& cluster, const std::string& why);
  Result<void> judge_burn_in_round(ClusterRow& cluster, const ProbeCompleted& e);
  // After the probe round: the fabric step among the nodes that passed, when the cluster has one
  // (burn_in.fabric) and two such nodes; true when it was enqueued (the cluster waits for it).
  Result<bool> start_fabric_step(ClusterRow& cluster,
                                 const std::vector<NodeProbeVerdict>& verdicts);
  Result<void> judge_fabric_step(ClusterRow& cluster, const std::vector<FabricPairResult>& pairs,
                                 const std::string& token);
  Result<void> judge_release_round(const ProbeCompleted& e);
  Result<void> flag_implausible_mfu(AttemptRow& attempt, const JobRow& job);
  Result<void> watch_one_sample(AttemptRow& attempt, MfuWatchState& state,
                                std::vector<std::string>& suspects, const MfuSample& sample,
                                const MfuWatchPolicy& policy, std::vector<std::string>* confirmed);

  std::map<std::string, ClusterHistory> histories_;
  std::optional<Millis> histories_at_ms_;
  SaveTimeWindow save_times_;  // the window's checkpoint save times, kept between refreshes
  // What each cluster's last listing left in its node rows: the site's report of each node
  // (gpus, health, reason, busy GPUs, size) and when it was seen, in name order. Only a listing
  // writes those columns (Store::upsert_node, mark_nodes_seen), so the next one diffs against
  // this instead of reading 2,000 rows; the other columns of these rows are not kept current
  // and are not read. Read from the store for a cluster's first listing and after a rollback.
  Result<const std::vector<NodeRow>*> listed_nodes(const std::string& cluster);
  void remember_listing(const InventoryObserved& e, std::vector<NodeRow> unlisted, Millis now);
  std::map<std::string, std::vector<NodeRow>> listed_;
};

}  // namespace orch
