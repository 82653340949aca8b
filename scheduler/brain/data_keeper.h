#pragma once
// The brain's data part (issue 5, docs/data.md): the checkpoint registry (a copy row per
// reported checkpoint, `manifest` actions that list and verify copies, audits, the pre-launch
// check's verdicts, `data add|replicate|audit`) in data_registry.cpp; and data movement
// (replication and retention as transfers and `remove` actions, transfer progress, retries and
// failures, MFU-aware throttling) in data_transfers.cpp. Staging (what a launch may resume from
// at a site, the copies a job needs there first) is the part beside it, DataStager
// (data_stager.h), which asks this one where copies lie and to start copies.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/brain/brain_core.h"
#include "scheduler/brain/brain_event.h"
#include "scheduler/data/replication_plan.h"
#include "scheduler/model/manifest_action.h"
#include "scheduler/model/progress_line.h"

namespace orch {

class DataKeeper : BrainPart {
 public:
  explicit DataKeeper(BrainCore& core) : BrainPart(core) {}

  // What sites and the transfer worker report.
  Result<BrainReply> on(const ManifestCompleted& e);
  Result<BrainReply> on(const RemoveCompleted& e);
  Result<BrainReply> on(const TransferProgressed& e);
  Result<BrainReply> on(const TransferFinished& e);
  // The data commands.
  Result<BrainReply> on(const RegisterDataset& e);
  Result<BrainReply> on(const ReplicateData& e);
  Result<BrainReply> on(const StartAudit& e);

  // A checkpoint an attempt reported (its path already confined to checkpoint_dir_of(attempt)):
  // a copy row at its site, confined to that directory, and a listing of it.
  Result<void> register_checkpoint(const AttemptRow& attempt, std::int64_t checkpoint_id,
                                   const std::string& path, const std::string& node = "");
  // Tiered checkpoints (data_tiers.cpp, issue 38). The directory a checkpoint line's copy must
  // lie in: the attempt's checkpoint directory for the shared tier, its node's own directory
  // (storage.node_local, "{node}" filled in) for the local one; ErrorKind::invalid, saying why,
  // when the cluster keeps no node copies or the node is not the attempt's.
  Result<std::string> tier_dir(const AttemptRow& attempt, const CheckpointReport& report);
  // A line in another tier of a checkpoint this attempt already reported at that step (the
  // drain of a node's copy, say) becomes a copy of it: true. false: a checkpoint of its own.
  Result<bool> add_tier_copy(const AttemptRow& attempt, const CheckpointReport& report,
                             const std::string& path);
  // The node went down with the attempt: every copy on its own disk is missing from now on.
  Result<void> lose_node_copies(const AttemptRow& attempt, const std::string& node);
  // The directory an attempt's checkpoints must lie in (issue 37): the one recorded when it was
  // placed, or, for an attempt placed before there was one, the one its cluster's checkpoint
  // root gives the job now; empty when that cluster is no longer configured (nothing fits).
  std::string checkpoint_dir_of(const AttemptRow& attempt);
  // The pre-launch check's verdict on the copies the launch could resume from.
  Result<void> note_resume_choice(AttemptRow& attempt, const ResumeChoice& choice);
  // Marks the copies at the attempt's site that check found missing or different.
  Result<void> mark_rejected_copies(const AttemptRow& attempt,
                                    const std::vector<RejectedCheckpoint>& rejected);
  // Tick: throttle transfers that hurt a job's MFU, start the audits due, replicate.
  Result<void> throttle_transfers();
  Result<void> start_due_audits(bool force, const std::string& only_cluster);
  Result<void> sweep_replication();

  // For the stager (data_stager.h). The directory a copy must lie in at its site: the one
  // recorded with it; for a checkpoint's copy recorded before there was one, its job's replica
  // directory there when the path is in it, else its job's own checkpoint directory there
  // (empty when the cluster is no longer configured); for a dataset, empty (a person
  // registered it where it is).
  Result<std::string> confinement_of(const ReplicaRow& replica);
  // A copy of `source` to `to`:`dst_path` queued as a transfer (the destination's copy row
  // written or reused); its id.
  Result<std::int64_t> start_transfer(const ReplicaRow& source, const std::string& to,
                                      const std::string& dst_path, const std::string& why,
                                      std::int64_t bytes);
  // The clusters whose storage can be listed and whose site is healthy now.
  Result<std::set<std::string>> usable_sites();
  // Bytes per second between two sites, estimated from their last completed transfers.
  Result<double> bandwidth_between(const std::string& a, const std::string& b);

 private:
  static bool lists_storage_at(const ClusterSpec* spec) {
    return spec != nullptr && spec->lists_storage();
  }
  // Asks the cluster's worker to list a copy, for a purpose; with hash_files given only those
  // are hashed, else as `hash` says (every file, or sizes only).
  Result<void> request_manifest(const ReplicaRow& replica, ManifestPurpose purpose,
                                std::optional<std::int64_t> transfer_id = std::nullopt,
                                const std::vector<std::string>& hash_files = {},
                                ManifestRequest::Hash hash = ManifestRequest::Hash::all);
  // A copy the site found outside the directory it must lie in: marked refused (final: never
  // listed, copied from or to, or deleted again), its transfers cancelled, and an event
  // (`bad-progress-line` when it is what the job reported, else `checkpoint-refused`).
  Result<void> refuse_copy(ReplicaRow& replica, const std::string& why,
                           const std::string& found_by);
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
                               const std::vector<ReplicaRow>& copies);
  // Marks the copy deleted and asks its site to remove it (inside its confinement only): true
  // when a removal was queued (false: already gone, refused, or nothing left to confine it to).
  Result<bool> remove_copy(ReplicaRow copy, const std::string& why);
  // Retention of the node tier: each node keeps the newest `keep` of the job's checkpoints.
  // Copies `plan` deletes are left to it.
  Result<void> retire_node_copies(JobId job, const std::vector<CheckpointRow>& ckpts,
                                  const std::vector<ReplicaRow>& copies, int keep,
                                  const ReplicationPlan& plan);

  std::map<std::string, Millis> last_audit_ms_;  // per cluster
  std::set<std::int64_t> auditing_;              // copies with an audit in flight
  Millis last_sweep_ms_ = 0;
};

}  // namespace orch
