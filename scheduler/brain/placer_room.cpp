// The placer making room for a job that fits nowhere: lower-priority attempts asked to save
// and stop (preemption, and its calling off once the job lands elsewhere), and the GPUs held for
// the first such job while attempts end by their time limits (backfill).
#include <cstdio>

#include "scheduler/brain/placer.h"
#include "scheduler/common/text.h"
#include "scheduler/placement/preemption.h"

namespace orch {

namespace {

// The "preempting" event of one victim's attempt: whom it makes room for, what it risks, and
// how it is stopped.
std::string preemption_message(const AttemptRow& a, const PreemptionCandidate& v,
                               const PreemptionSpec& p, bool asks, const std::string& who) {
  char grace[32];
  std::snprintf(grace, sizeof grace, "%g", p.grace_s);
  return "attempt " + std::to_string(a.no) + " on " + a.cluster + " makes room for " + who +
         (v.reclaim ? ", whose team is within its quota: it runs on borrowed GPUs" : "") + ": " +
         std::to_string(v.steps_at_risk) + " step(s) since its last checkpoint; " +
         (asks ? "asked to save (SIG" + p.signal + "), stopped at its checkpoint or after " +
                     grace + " s"
               : std::string("stopped at once (") +
                     (a.state == AttemptState::running ? "no grace" : "not running yet") + ")");
}

// A victim as the waiting job's reason and event name it.
std::string victim_summary(const PreemptionCandidate& v) {
  return "job " + std::to_string(v.job) + " (" +
         (v.reclaim ? "borrowed by " + (v.team.empty() ? "no team" : v.team) + ", "
                    : std::string()) +
         std::to_string(v.steps_at_risk) + " step(s) at risk)";
}

}  // namespace

Result<void> Placer::consider_preemption(const JobRow& job, const PlacementRequest& req,
                                         const std::vector<ClusterView>& views, std::string& reason,
                                         std::vector<PreemptionNote>& notes) {
  const int priority = job.spec.priority;
  // Nothing can be below it, and no quota gives it borrowed GPUs to take back.
  if (priority <= -kMaxPriority && !ledger_.enabled()) return Ok{};
  auto preempting = store_.preempting_attempts();
  if (!preempting) return preempting.error();
  std::vector<std::string> making_room;
  for (const auto& a : *preempting) {
    if (a.preempt_for != job.id) continue;
    making_room.push_back("job " + std::to_string(a.job_id) + " on " + a.cluster);
    auto victim = store_.job(a.job_id);
    if (!victim) return victim.error();
    PreemptionCandidate c{a.id, a.job_id, a.cluster, a.gpus};
    if (*victim) c.team = (*victim)->spec.team, c.job_name = (*victim)->name;
    notes.push_back(
        {std::move(c), true, "taken: asked to save a checkpoint and stop for this job"});
  }
  if (!making_room.empty()) {
    reason =
        "waiting for room: preempted " + join(making_room, ", ") + " to save a checkpoint and stop";
    return Ok{};
  }
  auto plan = plan_room(job, req, views, notes);
  if (!plan) return plan.error();
  if (!*plan) return Ok{};
  const Millis now = clock_.now_ms();
  const std::string who =
      "job " + std::to_string(job.id) + " (priority " +
      (job.spec.priority_class.empty() ? std::string() : job.spec.priority_class + " ") +
      std::to_string(priority) + ")";
  std::vector<std::string> victims;
  for (const auto& v : (*plan)->victims) {
    auto victim_job = store_.job(v.job);
    if (!victim_job) return victim_job.error();
    auto attempts = store_.attempts_of(v.job);
    if (!attempts) return attempts.error();
    for (auto a : *attempts) {
      if (a.id != v.attempt) continue;
      a.preempt_for = job.id;
      a.preempt_asked_ms = now;
      if (auto r = store_.update_attempt(a); !r) return r;
      const PreemptionSpec& p = (*victim_job) ? (*victim_job)->spec.preemption : PreemptionSpec{};
      const bool asks = a.state == AttemptState::running && p.grace_s > 0;
      if (asks) {
        if (auto r = core_.request_signal(a, p.signal); !r) return r;
      }
      if (auto r = event(v.job, a.no, "preempting", preemption_message(a, v, p, asks, who)); !r) {
        return r;
      }
    }
    victims.push_back(victim_summary(v));
  }
  reason = "waiting for room: preempted " + join(victims, ", ") + " on " + (*plan)->cluster +
           " to save a checkpoint and stop";
  return event(job.id, std::nullopt, "preemption",
               "preempting on " + (*plan)->cluster + ": " + join(victims, ", ") + "; " +
                   std::to_string((*plan)->steps_at_risk) + " step(s) at risk in all");
}

Result<std::optional<PreemptionPlan>> Placer::plan_room(const JobRow& job,
                                                        const PlacementRequest& req,
                                                        const std::vector<ClusterView>& views,
                                                        std::vector<PreemptionNote>& notes) {
  const int priority = job.spec.priority;
  auto candidates =
      store_.preemption_candidates(ledger_.enabled() ? std::nullopt : std::optional(priority));
  if (!candidates) return candidates.error();
  if (candidates->empty()) return std::optional<PreemptionPlan>();
  if (!ledger_.enabled()) {
    return plan_preemption(pipeline_, req, priority, views, *candidates, &notes);
  }
  // Within its team's quota, taking back other teams' borrowed GPUs first; else, when it may
  // borrow, making room by priority alone. The notes are the deciding pass's.
  PlacementRequest within = req;
  within.within_quota = true;
  auto may_stop = preemptible_by(job.spec, ledger_, true, *candidates, &notes);
  std::optional<PreemptionPlan> plan =
      plan_preemption(pipeline_, within, priority, views, may_stop, &notes);
  if (!plan && may_borrow(job.spec)) {
    notes.clear();
    PlacementRequest beyond = req;
    beyond.within_quota = false;
    may_stop = preemptible_by(job.spec, ledger_, false, *candidates, &notes);
    plan = plan_preemption(pipeline_, beyond, priority, views, may_stop, &notes);
  }
  return plan;
}

Result<void> Placer::consider_hold(const JobRow& job, const PlacementRequest& req,
                                   const std::vector<ClusterView>& views) {
  const WaitingQueue::Key key =
      WaitingQueue::key_of({job.id, job.state, job.next_attempt_ms, job.spec.nodes,
                            job.spec.gpus_per_node, job.spec.priority});
  const bool holder = hold_ && hold_->held.job == job.id;
  if (hold_ && !holder && !(key < hold_key_)) return Ok{};  // a job ahead of it holds already
  // A job that could only borrow beyond its team's quota holds nothing: borrowing takes idle
  // GPUs as they come, in fair share among the teams (docs/scheduling.md).
  std::optional<HoldPlan> plan;
  PlacementRequest within = req;
  within.within_quota = ledger_.enabled();
  if (within_quota_somewhere(job.spec)) {
    auto ends = store_.attempt_ends();
    if (!ends) return ends.error();
    plan = plan_hold(pipeline_, within, views, *ends);
  }
  if (!plan) {
    if (holder) {
      hold_.reset();
      apply_hold();
    }
    return Ok{};
  }
  const bool moved =
      !holder || hold_->cluster != plan->cluster || hold_->held.starts_ms != plan->held.starts_ms;
  hold_ = std::move(plan);
  hold_key_ = key;
  apply_hold();
  if (!moved) return Ok{};
  const HeldGpus& h = hold_->held;
  std::string msg = std::to_string(h.gpus) + " GPU(s) held on " + hold_->cluster + "; it starts ";
  if (h.starts_ms) {
    const Millis in_ms = std::max<Millis>(0, *h.starts_ms - req.now_ms);
    msg += "there in " + std::to_string((in_ms + 999) / 1000) +
           " s at the latest, as attempts end by their time limits (" +
           std::to_string(h.spare_gpus) +
           " spare); a job after it uses them only if its time_limit ends it by then";
  } else {
    msg += "there when attempts without a time limit end; a job after it may not use them";
  }
  return event(job.id, std::nullopt, "holding", msg);
}

Result<void> Placer::call_off_preemptions(JobId job) {
  auto preempting = store_.preempting_attempts();
  if (!preempting) return preempting.error();
  for (auto a : *preempting) {
    if (a.preempt_for != job || a.state == AttemptState::exited) continue;
    a.preempt_for.reset();
    a.preempt_asked_ms.reset();
    if (auto r = store_.update_attempt(a); !r) return r;
    if (auto r = event(a.job_id, a.no, "preemption-called-off",
                       "job " + std::to_string(job) + " was placed elsewhere: attempt " +
                           std::to_string(a.no) + " on " + a.cluster + " goes on");
        !r) {
      return r;
    }
  }
  return Ok{};
}

}  // namespace orch
