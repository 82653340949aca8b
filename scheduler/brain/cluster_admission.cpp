// A cluster's life after it joined (issue 15): a person drains it (no new work; running jobs
// finish or move at their next checkpoint), activates it again, or retires it (returned to its
// provider: its jobs move at once). Placement's admission filter keeps new work off every
// cluster that is not active; this file changes the state and moves what runs there.
#include "scheduler/brain/attempt_tracker.h"

namespace orch {
namespace {

// Why a change is refused, or nullopt when it may be made.
std::optional<std::string> refusal(const ClusterRow& c, Admission to) {
  const std::string name = "cluster " + c.name;
  if (c.admission == Admission::retired) {
    return name + " is retired; a retired cluster does not come back";
  }
  if (to == Admission::active &&
      (c.admission == Admission::pending || c.admission == Admission::burn_in)) {
    return name + " is " + std::string(to_string(c.admission)) +
           "; it becomes active when its burn-in round passes";
  }
  return std::nullopt;
}

}  // namespace

Result<BrainReply> AttemptTracker::on(const SetClusterAdmission& e) {
  if (!cluster_spec(e.cluster)) {
    return make_error(ErrorKind::not_found, "no cluster \"" + e.cluster + "\"");
  }
  if (e.to != Admission::draining && e.to != Admission::active && e.to != Admission::retired) {
    return make_error(ErrorKind::invalid,
                      "a person may drain, activate or retire a cluster, not "
                      "set it " +
                          std::string(to_string(e.to)));
  }
  auto row = store_.cluster(e.cluster);
  if (!row) return row.error();
  if (!*row) return make_error(ErrorKind::not_found, "no cluster \"" + e.cluster + "\"");
  ClusterRow c = **row;
  if (auto why = refusal(c, e.to)) return make_error(ErrorKind::conflict, *why);
  if (c.admission == e.to) return BrainReply{0, std::string(to_string(c.admission))};
  if (c.admission == Admission::pending_delivery && e.to == Admission::active) {
    // A person says it has arrived.
    const std::string how =
        "activated by hand" + (e.reason.empty() ? std::string() : ": " + e.reason);
    if (auto r = health_.mark_delivered(c, how); !r) return r.error();
    return BrainReply{0, std::string(to_string(c.admission))};
  }
  const Millis now = clock_.now_ms();
  const Admission from = c.admission;
  c.admission = e.to;
  c.admission_ms = now;
  c.admission_reason = e.reason;
  if (auto r = store_.update_cluster(c); !r) return r.error();
  std::string msg = "cluster " + c.name + " " + std::string(to_string(from)) + " -> " +
                    std::string(to_string(e.to));
  if (!e.reason.empty()) msg += ": " + e.reason;
  if (e.to == Admission::draining) {
    msg += "; no new work, running jobs move at their next checkpoint";
  }
  if (auto r = store_.add_event(std::nullopt, std::nullopt, now,
                                "cluster-" + std::string(to_string(e.to)), msg);
      !r) {
    return r.error();
  }
  if (e.to == Admission::retired) {
    auto live = store_.live_attempts(c.name);
    if (!live) return live.error();
    for (auto a : *live) {
      if (a.cancel_requested) continue;
      if (auto r = move_attempt(a, "moved: cluster " + c.name + " was retired"); !r) {
        return r.error();
      }
    }
  }
  return BrainReply{0, std::string(to_string(c.admission))};
}

Result<void> AttemptTracker::move_off_draining() {
  auto rows = store_.clusters();
  if (!rows) return rows.error();
  for (const auto& c : *rows) {
    if (c.admission != Admission::draining) continue;
    const Millis since = c.admission_ms.value_or(0);
    auto live = store_.live_attempts(c.name);
    if (!live) return live.error();
    for (auto a : *live) {
      if (a.cancel_requested || a.state != AttemptState::running) continue;
      // Its newest checkpoint saved since the drain began, once a copy of it is verified.
      auto ckpts = store_.checkpoints_of(a.job_id);
      if (!ckpts) return ckpts.error();
      std::optional<std::int64_t> step;
      for (auto it = ckpts->rbegin(); it != ckpts->rend() && !step; ++it) {
        if (it->attempt_id != a.id || it->at_ms < since) continue;
        auto copies = store_.replicas_of_checkpoint(it->id);
        if (!copies) return copies.error();
        for (const auto& r : *copies) {
          if (r.state == ReplicaState::verified && on_shared_storage(r)) step = it->step;
        }
      }
      if (!step) continue;
      if (auto r = move_attempt(a, "moved: cluster " + c.name + " is draining; its checkpoint " +
                                       "at step " + std::to_string(*step) + " is verified");
          !r) {
        return r;
      }
    }
  }
  return Ok{};
}

}  // namespace orch
