#pragma once
// The brain's data registry (issue 5, docs/data.md): what is recorded about each copy of a
// checkpoint or dataset. A checkpoint an attempt reports gets a copy row at its site, confined to
// its directory, and a `manifest` action that lists it there; a dataset a person registers
// likewise (`data add`). It answers where a copy must lie, whose it is and what it should hold
// (the registered manifest), asks a site to list a copy, and keeps the audits in flight. It
// decides nothing about what a listing says (DataVerifier, data_verifier.h) or about copies
// between sites (DataTransfers, data_transfers.h): both stand on it, and it calls neither.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/brain/brain_core.h"
#include "scheduler/brain/brain_event.h"
#include "scheduler/model/manifest_action.h"
#include "scheduler/model/progress_line.h"

namespace orch {

class DataRegistry : BrainPart {
 public:
  explicit DataRegistry(BrainCore& core) : BrainPart(core) {}

  // The data command `data add`: a dataset a person names at a site, listed there.
  Result<BrainReply> on(const RegisterDataset& e);

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

  // The directory a copy must lie in at its site: the one recorded with it; for a checkpoint's
  // copy recorded before there was one, its job's replica directory there when the path is in
  // it, else its job's own checkpoint directory there (empty when the cluster is no longer
  // configured); for a dataset, empty (a person registered it where it is).
  Result<std::string> confinement_of(const ReplicaRow& replica);
  // Asks the cluster's worker to list a copy, for a purpose; with hash_files given only those
  // are hashed, else as `hash` says (every file, or sizes only).
  Result<void> request_manifest(const ReplicaRow& replica, ManifestPurpose purpose,
                                std::optional<std::int64_t> transfer_id = std::nullopt,
                                const std::vector<std::string>& hash_files = {},
                                ManifestRequest::Hash hash = ManifestRequest::Hash::all);
  // The registered manifest of a copy's object (checkpoint or dataset); nullopt if not known.
  Result<std::optional<Manifest>> registered_manifest(const ReplicaRow& replica);
  // Human name of a copy's object: "checkpoint at step 40 of job 3", "dataset imagenet".
  Result<std::string> object_name(const ReplicaRow& replica);
  // Job a copy's object belongs to (checkpoints only).
  Result<std::optional<JobId>> job_of(const ReplicaRow& replica);

  // Copies with an audit in flight, one at a time each: begin_audit is false when one already is.
  bool auditing(std::int64_t replica_id) const { return auditing_.count(replica_id) != 0; }
  bool begin_audit(std::int64_t replica_id) { return auditing_.insert(replica_id).second; }
  void end_audit(std::int64_t replica_id) { auditing_.erase(replica_id); }

 private:
  static bool lists_storage_at(const ClusterSpec* spec) {
    return spec != nullptr && spec->lists_storage();
  }

  std::set<std::int64_t> auditing_;  // copies with an audit in flight
};

}  // namespace orch
