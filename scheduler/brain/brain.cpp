// The brain: one transaction per event, each event to its part, the tick's rounds.
#include "scheduler/brain/brain.h"

namespace orch {

Brain::Brain(Store& store, const Clock& clock, std::vector<ClusterSpec> clusters,
             PlacementPipeline pipeline)
    : core_(store, clock, std::move(clusters)),
      health_(core_),
      data_(core_),
      reconciler_(core_),
      placer_(core_, std::move(pipeline), data_, health_),
      attempts_(core_, health_, data_, placer_, reconciler_),
      support_(core_) {}

Result<void> Brain::start() {
  return core_.store.transaction([&]() -> Result<void> {
    const Millis now = core_.clock.now_ms();
    for (const auto& c : core_.clusters) {
      Admission admission = c.delivery.promised_ms ? Admission::pending_delivery
                            : c.burn_in.on_join    ? Admission::pending
                                                   : Admission::active;
      auto added = core_.store.ensure_cluster(c.name, admission, now);
      if (!added) return added.error();
      if (*added) {
        if (auto r = health_.record_health(c.name, SiteHealth::healthy); !r) return r;
      }
    }
    if (auto r = attempts_.forget_removed_clusters(); !r) return r;
    // The queue is read once here and then follows the job rows the brain writes.
    return placer_.load_queue();
  });
}

Result<BrainReply> Brain::handle(const BrainEvent& event) {
  Result<BrainReply> reply = BrainReply{};
  placer_.begin_event();
  auto tx = core_.store.transaction([&]() -> Result<void> {
    reply = std::visit([&](const auto& e) { return on(e); }, event);
    if (!reply) return reply.error();
    return Ok{};
  });
  placer_.after_commit(tx.ok());
  if (!tx) return tx.error();
  return reply;
}

Result<BrainReply> Brain::then_place(Result<BrainReply> reply) {
  if (!reply) return reply;
  if (auto r = placer_.place_waiting_jobs(); !r) return r.error();
  return reply;
}

Result<BrainReply> Brain::on(const ProbeCompleted& e) {
  // A round's verdicts may admit a cluster or release nodes.
  return then_place(health_.on(e));
}

Result<BrainReply> Brain::on(const SetNodeState& e) {
  if (e.to != NodeState::active) return health_.on(e);
  return then_place(health_.on(e));
}

Result<BrainReply> Brain::on(const Tick&) {
  if (auto r = attempts_.expire_unreachable_sites(); !r) return r.error();
  if (auto r = data_.throttle_transfers(); !r) return r.error();
  if (auto r = data_.start_due_audits(false, {}); !r) return r.error();
  if (auto r = data_.sweep_replication(); !r) return r.error();
  if (auto r = attempts_.detect_hangs(); !r) return r.error();
  if (auto r = attempts_.move_off_draining(); !r) return r.error();
  if (auto r = health_.start_due_burn_ins(); !r) return r.error();
  if (auto r = health_.start_release_probes(); !r) return r.error();
  if (auto r = placer_.place_waiting_jobs(); !r) return r.error();
  return BrainReply{};
}

}  // namespace orch
