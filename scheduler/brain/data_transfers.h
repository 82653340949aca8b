#pragma once
// The brain's data transfers (issue 5, docs/data.md): copies between sites. Transfers as the
// transfer worker reports them (progress, retries, failures), cancelled when their source is
// found bad, throttled when they hurt a job's MFU; replication and retention (the plan is
// scheduler/data/replication_plan.h) as transfers and `remove` actions; `data replicate` by hand.
// It stands on the registry (data_registry.h) for where a copy must lie, whose it is, what it
// should hold and listing it; the verifier (data_verifier.h) and the stager (data_stager.h)
// stand on it.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/brain/brain_core.h"
#include "scheduler/brain/brain_event.h"
#include "scheduler/brain/data_registry.h"
#include "scheduler/data/code_staging.h"
#include "scheduler/data/replication_plan.h"

namespace orch {

class DataTransfers : BrainPart {
 public:
  DataTransfers(BrainCore& core, DataRegistry& registry) : BrainPart(core), registry_(registry) {}

  // What sites and the transfer worker report.
  Result<BrainReply> on(const RemoveCompleted& e);
  Result<BrainReply> on(const TransferProgressed& e);
  Result<BrainReply> on(const TransferFinished& e);
  // The data command `data replicate`: a dataset or a job's newest checkpoint to a site.
  Result<BrainReply> on(const ReplicateData& e);

  // Tick: throttle transfers that hurt a job's MFU; plan every job's replication now and then.
  Result<void> throttle_transfers();
  Result<void> sweep_replication();
  // Tick, hourly (code_pruning.cpp, issue 40): the sites' code no live or recent job uses,
  // removed there.
  Result<void> sweep_code();

  // A copy of `source` to `to`:`dst_path` queued as a transfer (the destination's copy row
  // written or reused); its id. purpose and job: what the transfers list groups it under.
  Result<std::int64_t> start_transfer(const ReplicaRow& source, const std::string& to,
                                      const std::string& dst_path, const std::string& why,
                                      std::int64_t bytes,
                                      TransferPurpose purpose = TransferPurpose::replication,
                                      std::optional<JobId> job = std::nullopt);
  // The clusters whose storage can be listed and whose site is healthy now.
  Result<std::set<std::string>> usable_sites();
  // Bytes per second between two sites, estimated from their last completed transfers.
  Result<double> bandwidth_between(const std::string& a, const std::string& b);
  // Transfers still to copy from this copy (it was found gone or bad): cancelled.
  Result<void> cancel_transfers_from(const ReplicaRow& source, const std::string& why);
  // The job's copies changed: its replication plan made again, the copies and deletions it asks
  // for started.
  Result<void> replicate_job(JobId job);

 private:
  static bool lists_storage_at(const ClusterSpec* spec) {
    return spec != nullptr && spec->lists_storage();
  }
  static double bandwidth_of(const std::vector<TransferRow>& done);
  // The bandwidth between two sites from their newest done transfers (either way), and whether
  // there were any; read again only after a transfer row was written (Store::transfers_epoch):
  // every replication plan and every staging weigh asks, a month of them tens of thousands.
  struct PairBandwidth {
    bool measured = false;
    double bps = 0;
  };
  Result<PairBandwidth> pair_bandwidth(const std::string& a, const std::string& b);
  Result<void> audit_transfer_source(const TransferRow& transfer);
  // replicate_job's steps (data_replication.cpp): what plan_replication reads, the copies it
  // asks for, the deletions.
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
                               const std::vector<ReplicaRow>& copies);
  // Marks the copy deleted and asks its site to remove it (inside its confinement only): true
  // when a removal was queued (false: already gone, refused, or nothing left to confine it to).
  Result<bool> remove_copy(ReplicaRow copy, const std::string& why);
  // Retention of the node tier (data_tiers.cpp): each node keeps the newest `keep` of the job's
  // checkpoints. Copies `plan` deletes are left to it.
  Result<void> retire_node_copies(JobId job, const std::vector<CheckpointRow>& ckpts,
                                  const std::vector<ReplicaRow>& copies, int keep,
                                  const ReplicationPlan& plan);

  // sweep_code's steps: every job's code, live or ended (when); one copy removed at its site.
  Result<std::vector<CodeUse>> code_uses();
  Result<void> prune_code_copy(TransferRow t);

  DataRegistry& registry_;
  Millis last_sweep_ms_ = 0;
  Millis last_code_sweep_ms_ = 0;
  std::map<std::pair<std::string, std::string>, PairBandwidth> bandwidths_;
  std::uint64_t bandwidths_epoch_ = 0;
};

}  // namespace orch
