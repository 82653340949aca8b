#pragma once
// The brain's data verifier (issue 5, docs/data.md): what a listing of a copy says (a new copy's
// manifest registered, a transferred copy verified against its source's or copied again, an
// audit's sample), copies found gone, changed or outside their directory (marked, refused), the
// audits due, and the pre-launch check's verdicts. A copy found bad has the transfers from it
// cancelled and its job's replication planned again (DataTransfers); a verified one plans it
// again too. It stands on the registry and the transfers; nothing stands on it but AttemptTracker
// (the check's verdicts) and Brain.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/brain/brain_core.h"
#include "scheduler/brain/brain_event.h"
#include "scheduler/brain/data_registry.h"
#include "scheduler/brain/data_transfers.h"

namespace orch {

class DataVerifier : BrainPart {
 public:
  DataVerifier(BrainCore& core, DataRegistry& registry, DataTransfers& transfers)
      : BrainPart(core), registry_(registry), transfers_(transfers) {}

  // What a site's listing of a copy says (register, verify or audit).
  Result<BrainReply> on(const ManifestCompleted& e);
  // The data command `data audit`: every copy (at a cluster, or everywhere) listed now.
  Result<BrainReply> on(const StartAudit& e);

  // The pre-launch check's verdict on the copies the launch could resume from.
  Result<void> note_resume_choice(AttemptRow& attempt, const ResumeChoice& choice);
  // Marks the copies at the attempt's site that check found missing or different.
  Result<void> mark_rejected_copies(const AttemptRow& attempt,
                                    const std::vector<RejectedCheckpoint>& rejected);
  // Tick (and `data audit`): the audits due at each cluster whose storage can be listed.
  Result<void> start_due_audits(bool force, const std::string& only_cluster);

 private:
  static bool lists_storage_at(const ClusterSpec* spec) {
    return spec != nullptr && spec->lists_storage();
  }
  // A copy the site found outside the directory it must lie in: marked refused (final: never
  // listed, copied from or to, or deleted again), its transfers cancelled, and an event
  // (`bad-progress-line` when it is what the job reported, else `checkpoint-refused`).
  Result<void> refuse_copy(ReplicaRow& replica, const std::string& why,
                           const std::string& found_by);
  Result<void> on_registered(ReplicaRow& replica, const ManifestCompleted& e);
  Result<void> on_verified(ReplicaRow& replica, const ManifestCompleted& e);
  Result<void> on_copy_mismatch(ReplicaRow& replica, std::optional<TransferRow>& transfer,
                                std::optional<JobId> job, const std::string& name,
                                const std::string& problem);
  Result<void> on_audited(ReplicaRow& replica, const ManifestCompleted& e);
  // A copy found gone or different (audit, verification, pre-launch check).
  Result<void> replica_failed(ReplicaRow& replica, ReplicaState to, const std::string& why,
                              const std::string& found_by);

  DataRegistry& registry_;
  DataTransfers& transfers_;
  std::map<std::string, Millis> last_audit_ms_;  // per cluster
};

}  // namespace orch
