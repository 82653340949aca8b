#pragma once
// The brain: every decision orchestrate makes. It takes one event at a time, changes state in
// one SQLite transaction, and writes the actions it decides (launch, cancel) to the outbox in
// that same transaction, so a crash can never separate a decision from its action. It does no
// I/O of its own besides the store and never blocks on a site; site workers carry out the
// outbox. Tests drive it directly with a FakeClock and check the outbox: no threads, no sleeps.
//
// The brain is its parts, which share the store's one transaction (brain_core.h): placing
// (placer.h), the attempts and what follows their end (attempt_tracker.h), health
// (health_judge.h), hot spares (spare_pool.h), data (data_registry.h, data_transfers.h,
// data_verifier.h), staging a launch's data (data_stager.h) and reconciling duplicates
// (reconciler.h). Brain opens the transaction, hands each event to the part it concerns, and runs
// the tick's rounds.

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/brain/attempt_tracker.h"
#include "scheduler/brain/brain_core.h"
#include "scheduler/brain/brain_event.h"
#include "scheduler/brain/data_registry.h"
#include "scheduler/brain/data_stager.h"
#include "scheduler/brain/data_transfers.h"
#include "scheduler/brain/data_verifier.h"
#include "scheduler/brain/health_judge.h"
#include "scheduler/brain/placer.h"
#include "scheduler/brain/reconciler.h"
#include "scheduler/brain/spare_pool.h"
#include "scheduler/brain/support_desk.h"
#include "scheduler/common/clock.h"
#include "scheduler/placement/pipeline.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/store.h"

namespace orch {

class Brain {
 public:
  Brain(Store& store, const Clock& clock, std::vector<ClusterSpec> clusters,
        PlacementPipeline pipeline = PlacementPipeline::standard(), SchedulingSpec scheduling = {});
  // Keeps the store's cost tally while it lives (issue 45, Store::set_attempt_pricer: an ended
  // attempt priced at its cluster's price); the destructor takes the pricer back.
  ~Brain();
  Brain(const Brain&) = delete;
  Brain& operator=(const Brain&) = delete;

  // Registers the configured clusters in the store. Call once before handle().
  Result<void> start();

  // Handles one event in one transaction. Errors are for the caller (bad command); a failed
  // transaction changes nothing.
  Result<BrainReply> handle(const BrainEvent& event);

  const std::vector<ClusterSpec>& clusters() const { return core_.clusters; }
  // Moves when an event wrote work for the workers (Store::work_epoch).
  std::uint64_t work_epoch() const { return core_.store.work_epoch(); }
  const ClusterSpec* cluster_spec(const std::string& name) const {
    return core_.cluster_spec(name);
  }

 private:
  // Each event to the part it concerns; the few that free capacity place waiting jobs after.
  Result<BrainReply> on(const SubmitJob& e) { return placer_.on(e); }
  Result<BrainReply> on(const CancelJob& e) { return attempts_.on(e); }
  // A hot spare's holder or burn-in (spare_pool.h) goes to the spares, the rest to attempts.
  Result<BrainReply> on(const LaunchCompleted& e) {
    return SparePool::owns(e.token) ? spares_.on(e) : attempts_.on(e);
  }
  Result<BrainReply> on(const CancelCompleted& e) {
    return SparePool::owns(e.token) ? spares_.on(e) : attempts_.on(e);
  }
  Result<BrainReply> on(const AttemptObserved& e);
  Result<BrainReply> on(const SiteUnreachable& e) { return attempts_.on(e); }
  Result<BrainReply> on(const SiteReachable& e) { return attempts_.on(e); }
  Result<BrainReply> on(const PreflightObserved& e) { return attempts_.on(e); }
  Result<BrainReply> on(const InventoryObserved& e) { return health_.on(e); }
  Result<BrainReply> on(const ProbeCompleted& e);
  Result<BrainReply> on(const FabricCompleted& e) { return then_place(health_.on(e)); }
  Result<BrainReply> on(const StartBurnIn& e) { return health_.on(e); }
  Result<BrainReply> on(const SetNodeState& e);
  Result<BrainReply> on(const SetClusterAdmission& e) { return then_place(attempts_.on(e)); }
  Result<BrainReply> on(const AddClusters& e);
  Result<BrainReply> on(const OpenTicket& e) { return support_.on(e); }
  Result<BrainReply> on(const NoteTicket& e) { return support_.on(e); }
  Result<BrainReply> on(const CloseTicket& e) { return support_.on(e); }
  Result<BrainReply> on(const ManifestCompleted& e) { return verifier_.on(e); }
  Result<BrainReply> on(const RemoveCompleted& e) { return transfers_.on(e); }
  Result<BrainReply> on(const TransferProgressed& e) { return transfers_.on(e); }
  Result<BrainReply> on(const TransferFinished& e) { return transfers_.on(e); }
  Result<BrainReply> on(const RegisterDataset& e) { return registry_.on(e); }
  Result<BrainReply> on(const ReplicateData& e) { return transfers_.on(e); }
  Result<BrainReply> on(const StartAudit& e) { return verifier_.on(e); }
  Result<BrainReply> on(const Tick& e);
  // Registers one configured cluster in the store (a new one as healthy, in the admission its
  // spec asks for); one already there keeps its row.
  Result<void> join(const ClusterSpec& c, Millis now);
  // The reply, after placing the waiting jobs when it is not an error.
  Result<BrainReply> then_place(Result<BrainReply> reply);

  BrainCore core_;
  HealthJudge health_;
  SparePool spares_;
  DataRegistry registry_;
  DataTransfers transfers_;
  DataVerifier verifier_;
  DataStager staging_;
  Reconciler reconciler_;
  Placer placer_;
  AttemptTracker attempts_;
  SupportDesk support_;
};

}  // namespace orch
