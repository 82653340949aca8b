// The brain: one transaction per event, each event to its part, the tick's rounds.
#include "scheduler/brain/brain.h"

#include <algorithm>

#include "scheduler/lifecycle/cost_tally.h"

namespace orch {

Brain::Brain(Store& store, const Clock& clock, std::vector<ClusterSpec> clusters,
             PlacementPipeline pipeline, SchedulingSpec scheduling)
    : core_(store, clock, std::move(clusters), std::move(scheduling)),
      health_(core_),
      spares_(core_, health_),
      registry_(core_),
      transfers_(core_, registry_),
      verifier_(core_, registry_, transfers_),
      staging_(core_, registry_, transfers_),
      reconciler_(core_),
      placer_(core_, std::move(pipeline), staging_, health_, spares_),
      attempts_(core_, health_, registry_, verifier_, placer_, reconciler_),
      support_(core_) {
  core_.store.set_attempt_pricer([this](const AttemptRow& a) {
    const ClusterSpec* spec = core_.cluster_spec(a.cluster);
    return ended_attempt_tally(a, spec != nullptr ? &spec->price : nullptr);
  });
}

Brain::~Brain() {
  core_.store.set_attempt_pricer(nullptr);
}

Result<void> Brain::start() {
  return core_.store.transaction([&]() -> Result<void> {
    const Millis now = core_.clock.now_ms();
    for (const auto& c : core_.clusters) {
      if (auto r = join(c, now); !r) return r;
    }
    if (auto r = attempts_.forget_removed_clusters(); !r) return r;
    // The queue is read once here and then follows the job rows the brain writes.
    return placer_.load_queue();
  });
}

Result<void> Brain::join(const ClusterSpec& c, Millis now) {
  Admission admission = c.delivery.promised_ms ? Admission::pending_delivery
                        : c.burn_in.on_join    ? Admission::pending
                                               : Admission::active;
  auto added = core_.store.ensure_cluster(c.name, admission, now);
  if (!added) return added.error();
  if (*added) return health_.record_health(c.name, SiteHealth::healthy);
  return Ok{};
}

Result<BrainReply> Brain::handle(const BrainEvent& event) {
  Result<BrainReply> reply = BrainReply{};
  placer_.begin_event();
  const std::size_t clusters_before = core_.clusters.size();
  const auto misconfigured_before = core_.misconfigured;
  auto tx = core_.store.transaction([&]() -> Result<void> {
    reply = std::visit([&](const auto& e) { return on(e); }, event);
    if (!reply) return reply.error();
    return Ok{};
  });
  if (!tx) {
    // Clusters an event added are gone with its rows.
    core_.clusters.erase(core_.clusters.begin() + static_cast<std::ptrdiff_t>(clusters_before),
                         core_.clusters.end());
    core_.misconfigured = misconfigured_before;
  }
  placer_.after_commit(tx.ok());
  health_.after_commit(tx.ok());
  if (!tx) return tx.error();
  return reply;
}

Result<BrainReply> Brain::on(const AddClusters& e) {
  std::vector<std::string> names;
  for (const ClusterSpec& c : e.clusters) {
    if (cluster_spec(c.name) || std::count(names.begin(), names.end(), c.name) > 0) {
      return make_error(ErrorKind::conflict,
                        "cluster \"" + c.name +
                            "\" is already configured; pick another name, or change it in the "
                            "clusters file and restart");
    }
    names.push_back(c.name);
  }
  const Millis now = core_.clock.now_ms();
  std::string message;
  for (const ClusterSpec& c : e.clusters) {
    // A name the store still has (a cluster removed from an earlier configuration) keeps its
    // row: its history and admission come back with it.
    if (auto r = join(c, now); !r) return r.error();
    if (!e.document.empty()) {
      AddedClusterRow row{c.name, e.source, e.document, now};
      if (auto r = core_.store.insert_added_cluster(row); !r) return r.error();
    }
    core_.clusters.push_back(c);
    auto row = core_.store.cluster(c.name);
    if (!row) return row.error();
    const std::string admission = *row ? std::string(to_string((*row)->admission)) : "active";
    message += (message.empty() ? "" : ", ") + c.name + " (" + admission + ")";
  }
  BrainReply reply;
  reply.message = "joined: " + message;
  return then_place(reply);
}

Result<BrainReply> Brain::then_place(Result<BrainReply> reply) {
  if (!reply) return reply;
  if (auto r = placer_.place_waiting_jobs(); !r) return r.error();
  return reply;
}

Result<BrainReply> Brain::on(const ProbeCompleted& e) {
  // A round's verdicts may admit a cluster or release nodes; a spare's only holds it.
  if (SparePool::owns(e.token)) return spares_.on(e);
  return then_place(health_.on(e));
}

Result<BrainReply> Brain::on(const AttemptObserved& e) {
  if (!SparePool::owns(e.token)) return attempts_.on(e);
  auto ready = spares_.observe(e);
  if (!ready) return ready.error();
  // A spare that became ready may be what a waiting gang needs.
  return *ready ? then_place(BrainReply{}) : BrainReply{};
}

Result<BrainReply> Brain::on(const SetNodeState& e) {
  if (e.to != NodeState::active) return health_.on(e);
  return then_place(health_.on(e));
}

Result<BrainReply> Brain::on(const Tick&) {
  if (auto r = attempts_.expire_unreachable_sites(); !r) return r.error();
  if (auto r = transfers_.throttle_transfers(); !r) return r.error();
  if (auto r = verifier_.start_due_audits(false, {}); !r) return r.error();
  if (auto r = transfers_.sweep_replication(); !r) return r.error();
  if (auto r = transfers_.sweep_code(); !r) return r.error();
  if (auto r = attempts_.detect_hangs(); !r) return r.error();
  if (auto r = attempts_.move_off_draining(); !r) return r.error();
  if (auto r = attempts_.advance_preemptions(); !r) return r.error();
  if (auto r = attempts_.move_off_long_queues(); !r) return r.error();
  if (auto r = attempts_.stop_past_time_limit(); !r) return r.error();
  if (auto r = health_.start_due_burn_ins(); !r) return r.error();
  if (auto r = health_.start_release_probes(); !r) return r.error();
  if (auto r = spares_.refill(); !r) return r.error();
  if (auto r = placer_.holds().budgets().sweep(); !r) return r.error();  // issue 45
  if (auto r = placer_.place_waiting_jobs(); !r) return r.error();
  return BrainReply{};
}

}  // namespace orch
