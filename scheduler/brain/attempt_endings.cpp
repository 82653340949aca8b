// The brain's attempts part: how an attempt ends and what the job does next (by its restart
// policy), hung attempts, sites that stop answering (their attempts end after a grace) or come
// back, and clusters removed from the configuration.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "scheduler/brain/attempt_tracker.h"
#include "scheduler/common/text.h"
#include "scheduler/lifecycle/error_excerpt.h"
#include "scheduler/lifecycle/hang_policy.h"
#include "scheduler/lifecycle/job_stats.h"
#include "scheduler/lifecycle/restart_history.h"
#include "scheduler/lifecycle/restart_policy.h"
#include "scheduler/model/ettr_text.h"

namespace orch {
namespace {

std::string seconds_text(Millis ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000.0);
  return buf;
}

}  // namespace

Result<void> AttemptTracker::forget_removed_clusters() {
  auto watched = store_.live_attempts(std::nullopt);
  if (!watched) return watched.error();
  for (auto a : *watched) {
    if (cluster_spec(a.cluster)) continue;
    if (auto r = store_.mark_actions_done_for_token(a.token, clock_.now_ms()); !r) return r;
    a.site_done = true;
    if (auto r = end_attempt(a, ExitCause::lost,
                             "cluster " + a.cluster + " is no longer in the configuration");
        !r) {
      return r;
    }
    if (auto r = after_attempt_end(a); !r) return r;
  }
  return Ok{};
}

// ---- after an attempt ends --------------------------------------------------------------

Result<void> AttemptTracker::end_attempt(AttemptRow& attempt, ExitCause cause,
                                         const std::string& detail,
                                         std::optional<Millis> last_heard) {
  attempt.cause = cause;
  // What failed: the attempt's own excerpt (attempt_exited), else the words of the verdict.
  if (is_failure_cause(cause) && attempt.error_excerpt.empty() && !detail.empty()) {
    attempt.error_excerpt = excerpt_line(detail, kMaxExcerptBytes);
  }
  // The newest sign of life the brain has of it: the scorecard's detection runs from here to
  // the verdict (now). Never later than now: a site's clock may run ahead of this one.
  const Millis now = clock_.now_ms();
  Millis alive = attempt.running_ms.value_or(attempt.started_ms);
  if (attempt.last_progress_ms) alive = std::max(alive, *attempt.last_progress_ms);
  if (last_heard) alive = std::max(alive, *last_heard);
  attempt.last_alive_ms = std::min(alive, now);
  if (auto r = store_.set_attempt_state(attempt, AttemptState::exited, now); !r) {
    return r;
  }
  std::string msg = "attempt " + std::to_string(attempt.no) + " on " + attempt.cluster +
                    " ended: " + std::string(to_string(cause));
  if (attempt.exit_code) msg += ", exit code " + std::to_string(*attempt.exit_code);
  if (attempt.signal) msg += ", signal " + std::to_string(*attempt.signal);
  if (attempt.last_step) msg += ", at step " + std::to_string(*attempt.last_step);
  // The node that failed first when the site named it (a gang's other nodes only went down with
  // it), else every node of the attempt.
  const std::vector<std::string> lost =
      attempt.failed_node.empty() ? attempt.nodes : std::vector<std::string>{attempt.failed_node};
  if (cause == ExitCause::node_lost) {
    msg += lost.empty() ? std::string(", on nodes the site did not name")
                        : ", on node(s) " + join(lost, ", ");
  } else if (!attempt.failed_node.empty()) {
    msg += ", first on node " + attempt.failed_node;
  }
  if (!detail.empty()) msg += " (" + detail + ")";
  if (auto r = event(attempt.job_id, attempt.no, "attempt-ended", msg); !r) return r;
  if (cause != ExitCause::node_lost) return Ok{};
  // The node ledger: the failure goes on the node(s) lost.
  for (const auto& node : lost) {
    std::string what = "node failure under job " + std::to_string(attempt.job_id) + " attempt " +
                       std::to_string(attempt.no);
    if (!attempt.site_job_id.empty()) what += " (site job " + attempt.site_job_id + ")";
    if (attempt.nodes.size() > 1) what += ", which ran on " + join(attempt.nodes, ", ");
    if (!detail.empty()) what += ": " + detail;
    if (auto r = health_.node_event(attempt.cluster, node, "node-failure", what, &attempt); !r)
      return r;
    // Its own disk went with it: a copy there is never resumed from.
    if (auto r = registry_.lose_node_copies(attempt, node); !r) return r;
  }
  return Ok{};
}

Result<BrainReply> AttemptTracker::resume_bounced(AttemptRow& a, const LaunchCompleted& e) {
  if (auto r = verifier_.mark_rejected_copies(a, e.resume.rejected); !r) return r.error();
  if (auto r = step_aside(a, ExitCause::cancelled, "resume-bounced", e.result.error().message);
      !r) {
    return r.error();
  }
  return BrainReply{};
}

Result<void> AttemptTracker::step_aside(AttemptRow& a, ExitCause cause, const std::string& kind,
                                        const std::string& why) {
  if (auto r = end_attempt(a, cause, why); !r) return r;
  const std::string message = "attempt " + std::to_string(a.no) + " on " + a.cluster + " " + why;
  const Millis now = clock_.now_ms();
  auto found = store_.job(a.job_id);
  if (!found) return found.error();
  if (!*found || is_terminal((*found)->state)) return Ok{};
  JobRow job = **found;
  job.next_attempt_ms = now;
  job.reason = "placing again: " + message;
  if (auto r = store_.set_job_state(job, JobState::resuming, now); !r) return r;
  return event(job.id, a.no, kind, message);
}

Result<void> AttemptTracker::move_attempt(AttemptRow& a, const std::string& why) {
  if (auto r = step_aside(a, ExitCause::cancelled, "moved", why); !r) return r;
  return request_cancel(a, why);
}

Result<void> AttemptTracker::move_off_long_queues() {
  auto queued = store_.queued_attempts();
  if (!queued) return queued.error();
  const Millis now = clock_.now_ms();
  for (auto a : *queued) {
    auto job = store_.job(a.job_id);
    if (!job) return job.error();
    if (!*job || is_terminal((*job)->state)) continue;
    const double max_s = (*job)->spec.max_queue_s;
    const Millis waited = now - a.started_ms;
    if (max_s <= 0 || waited < static_cast<Millis>(max_s * 1000.0)) continue;
    auto better = placer_.better_than_queue(**job, a);
    if (!better) return better.error();
    if (!*better) continue;
    char buf[160];
    std::snprintf(
        buf, sizeof buf, "moved: queued at %s for %.0f s (max_queue_s %g); %s can run it now",
        a.cluster.c_str(), static_cast<double>(waited) / 1000.0, max_s, (*better)->c_str());
    if (auto r = step_aside(a, ExitCause::queue_timeout, "moved", buf); !r) return r;
    if (auto r = request_cancel(a, buf); !r) return r;
  }
  return Ok{};
}

Result<void> AttemptTracker::advance_preemptions() {
  auto preempting = store_.preempting_attempts();
  if (!preempting) return preempting.error();
  for (auto a : *preempting) {
    if (a.state == AttemptState::exited || a.cancel_requested) continue;
    if (auto r = advance_preemption(a); !r) return r.error();
  }
  return Ok{};
}

Result<bool> AttemptTracker::advance_preemption(AttemptRow& a) {
  if (!a.preempt_for || !a.preempt_asked_ms || a.state == AttemptState::exited ||
      a.cancel_requested) {
    return false;
  }
  const Millis now = clock_.now_ms();
  // The job it makes room for no longer waits (cancelled, failed): the victim goes on.
  auto beneficiary = store_.job(*a.preempt_for);
  if (!beneficiary) return beneficiary.error();
  if (!*beneficiary || !is_waiting((*beneficiary)->state)) {
    const std::string state =
        *beneficiary ? std::string(to_string((*beneficiary)->state)) : std::string("gone");
    const JobId for_job = *a.preempt_for;
    a.preempt_for.reset();
    a.preempt_asked_ms.reset();
    if (auto r = store_.update_attempt(a); !r) return r.error();
    if (auto r = event(a.job_id, a.no, "preemption-called-off",
                       "job " + std::to_string(for_job) + " no longer waits (" + state +
                           "): attempt " + std::to_string(a.no) + " on " + a.cluster + " goes on");
        !r) {
      return r.error();
    }
    return false;
  }
  auto job = store_.job(a.job_id);
  if (!job) return job.error();
  if (!*job) return false;
  const PreemptionSpec& p = (*job)->spec.preemption;
  const auto grace_ms = static_cast<Millis>(p.grace_s * 1000.0);
  auto latest = store_.latest_checkpoint(a.job_id);
  if (!latest) return latest.error();
  const bool saved = *latest && (*latest)->attempt_id == a.id &&
                     (*latest)->at_ms > *a.preempt_asked_ms;  // printed after the ask reached it
  const bool never_ran = a.state != AttemptState::running;
  const bool grace_over = now - *a.preempt_asked_ms >= grace_ms;
  if (!saved && !never_ran && !grace_over) return false;
  // A victim of equal or higher priority was taken only as borrowed GPUs its team's quota did
  // not cover (placement/preemption.h, preemptible_by).
  const bool reclaimed = (*job)->spec.priority >= (*beneficiary)->spec.priority;
  std::string why =
      std::string(reclaimed ? "borrowed GPUs taken back for job " : "preempted for job ") +
      std::to_string(*a.preempt_for) + ": ";
  if (saved) {
    why += "it saved a checkpoint at step " + std::to_string((*latest)->step) +
           " after the save request";
  } else if (never_ran) {
    why += "it was not running yet";
  } else {
    char grace[32];
    std::snprintf(grace, sizeof grace, "%g", p.grace_s);
    why += std::string("no checkpoint within its grace of ") + grace + " s; it resumes from " +
           (*latest ? "step " + std::to_string((*latest)->step) : std::string("the start"));
  }
  if (auto r = step_aside(a, reclaimed ? ExitCause::quota_reclaimed : ExitCause::priority_preempted,
                          "preempted", why);
      !r) {
    return r.error();
  }
  if (auto r = request_cancel(a, why); !r) return r.error();
  return true;
}

Result<void> AttemptTracker::after_attempt_end(const AttemptRow& attempt) {
  const Millis now = clock_.now_ms();
  auto found = store_.job(attempt.job_id);
  if (!found) return found.error();
  if (!*found) return Ok{};
  JobRow job = **found;
  if (is_terminal(job.state)) return Ok{};
  auto attempts = store_.attempts_of(job.id);
  if (!attempts) return attempts.error();
  for (const auto& other : *attempts) {
    // Another attempt of this job is still live (a reconciled duplicate): it carries the job.
    if (other.state != AttemptState::exited && !other.cancel_requested) return Ok{};
  }

  // The budget and the backoff count failures in a row without progress (restart_policy.h).
  auto latest = store_.latest_checkpoint(job.id);
  if (!latest) return latest.error();
  const int streak =
      failure_streak(restart_history(*attempts, *latest, job.spec.restart.healthy_after_s, now));
  AfterExit next = decide_after_exit(job.spec.restart, streak, job.user_restarts, attempt.cause);
  switch (next.verdict) {
    case AfterExit::Verdict::ignore:
      return Ok{};
    case AfterExit::Verdict::succeed: {
      JobStats stats = compute_job_stats(*attempts, now);
      job.reason.clear();
      if (auto r = store_.set_job_state(job, JobState::succeeded, now); !r) return r;
      // An attempt stopped before it launched was no try of the job's (issue 42).
      const auto tried = std::count_if(attempts->begin(), attempts->end(),
                                       [](const AttemptRow& a) { return a.not_launched.empty(); });
      char buf[160];
      std::snprintf(buf, sizeof buf, "succeeded after %lld attempt(s); steps lost %lld; ETTR %s",
                    static_cast<long long>(tried), static_cast<long long>(stats.steps_lost),
                    stats.ettr ? ettr_digits(*stats.ettr).c_str() : "n/a");
      return event(job.id, attempt.no, "succeeded", buf);
    }
    case AfterExit::Verdict::fail:
      job.reason = reason_with_excerpt(next.reason, attempt.error_excerpt);
      if (auto r = store_.set_job_state(job, JobState::failed, now); !r) return r;
      return event(job.id, attempt.no, "failed", "failed: " + job.reason);
    case AfterExit::Verdict::resume: {
      (next.spends_infra ? job.infra_restarts : job.user_restarts) += 1;
      job.next_attempt_ms = now + next.delay_ms;
      job.reason = "resuming after " + reason_with_excerpt(next.reason, attempt.error_excerpt);
      if (auto r = store_.set_job_state(job, JobState::resuming, now); !r) return r;
      auto from = describe_resume_points(job.id);
      if (!from) return from.error();
      if (auto r = event(
              job.id, attempt.no, "resuming",
              "resuming in " + seconds_text(next.delay_ms) + " (" + next.reason + ") " + *from);
          !r) {
        return r;
      }
      return placer_.try_place(job);
    }
  }
  return Ok{};
}

Result<std::string> AttemptTracker::describe_resume_points(JobId job) {
  // Only checkpoints with a copy left can be resumed from: what retention keeps.
  auto ckpts = store_.checkpoints_with_copies(job);
  if (!ckpts) return ckpts.error();
  auto copies = store_.replicas_of_checkpoints_with_copies(job);
  if (!copies) return copies.error();
  std::map<std::int64_t, std::vector<const ReplicaRow*>> copies_of;
  for (const auto& r : *copies) {
    if (r.checkpoint_id) copies_of[*r.checkpoint_id].push_back(&r);
  }
  std::map<std::int64_t, std::vector<std::string>> sites_by_step;  // newest per site
  std::set<std::string> seen;
  for (auto it = ckpts->rbegin(); it != ckpts->rend(); ++it) {
    for (const ReplicaRow* r : copies_of[it->id]) {
      if (seen.count(r->cluster) != 0 ||
          (r->state != ReplicaState::verified && r->state != ReplicaState::present)) {
        continue;
      }
      seen.insert(r->cluster);
      sites_by_step[it->step].push_back(r->cluster);
    }
  }
  std::string from = "from the start (no checkpoint has a good copy yet)";
  if (!sites_by_step.empty()) {
    from = "from the newest checkpoint with a good copy where it is placed: ";
    for (auto it = sites_by_step.rbegin(); it != sites_by_step.rend(); ++it) {
      if (it != sites_by_step.rbegin()) from += "; ";
      from += "step " + std::to_string(it->first) + " at " + join(it->second, " and ");
    }
  }
  return from;
}

// ---- hangs ------------------------------------------------------------------------------

namespace {

// Why the attempt counts as hung, in the words of the rule that fired (lifecycle/hang_policy.h).
std::string hang_detail(const AttemptRow& a, Millis now) {
  char buf[200];
  if (!a.last_progress_ms) {
    const Millis since = a.running_ms.value_or(a.started_ms);
    std::snprintf(buf, sizeof buf,
                  "no first progress line %.0f s after it started (startup_timeout %.0f s)",
                  static_cast<double>(now - since) / 1000.0,
                  static_cast<double>(a.startup_timeout_ms) / 1000.0);
    return buf;
  }
  char limit[96];
  std::snprintf(limit, sizeof limit, "hang_after %.0f s",
                static_cast<double>(a.hang_after_ms) / 1000.0);
  if (a.hang_watch.adaptive) {
    if (auto median = median_step_s(a.hang_watch)) {
      std::snprintf(limit, sizeof limit, "%.0f s: max(60 s, 20 x median step %.3g s)",
                    static_cast<double>(a.hang_after_ms) / 1000.0, *median);
    } else {
      std::snprintf(limit, sizeof limit, "60 s: no step time yet");
    }
  }
  std::snprintf(buf, sizeof buf, "no progress line for %.0f s (%s), last step %lld",
                static_cast<double>(now - *a.last_progress_ms) / 1000.0, limit,
                static_cast<long long>(a.last_step.value_or(0)));
  return buf;
}

}  // namespace

Result<void> AttemptTracker::detect_hangs() {
  const Millis now = clock_.now_ms();
  // One query finds the candidates: a tick over hundreds of healthy jobs reads nothing more.
  auto silent_rows = store_.silent_attempts(now);
  if (!silent_rows) return silent_rows.error();
  return stop_each(*silent_rows, ExitCause::hang, "hung: ",
                   [&](const AttemptRow& a, const JobRow&) { return hang_detail(a, now); });
}

Result<void> AttemptTracker::stop_past_time_limit() {
  const Millis now = clock_.now_ms();
  // One query finds them: a tick reads live attempts only, never the history.
  auto past = store_.attempts_past_time_limit(now);
  if (!past) return past.error();
  return stop_each(
      *past, ExitCause::time_limit,
      "time limit: ", [&](const AttemptRow& a, const JobRow& job) -> std::optional<std::string> {
        if (!job.spec.time_limit_s) return std::nullopt;
        char detail[160];
        std::snprintf(detail, sizeof detail,
                      "ran past its job's time_limit of %g s (placed %.0f s ago)",
                      *job.spec.time_limit_s, static_cast<double>(now - a.started_ms) / 1000.0);
        return std::string(detail);
      });
}

Result<void> AttemptTracker::stop_each(
    std::vector<AttemptRow> attempts, ExitCause cause, const std::string& why_prefix,
    const std::function<std::optional<std::string>(const AttemptRow&, const JobRow&)>& detail_of) {
  for (auto& a : attempts) {
    auto job = store_.job(a.job_id);
    if (!job) return job.error();
    if (!*job || is_terminal((*job)->state)) continue;
    const std::optional<std::string> detail = detail_of(a, **job);
    if (!detail) continue;
    if (auto r = stop_attempt(a, cause, *detail, why_prefix + *detail); !r) return r;
  }
  return Ok{};
}

Result<void> AttemptTracker::stop_attempt(AttemptRow& a, ExitCause cause, const std::string& detail,
                                          const std::string& cancel_why) {
  if (auto r = end_attempt(a, cause, detail); !r) return r;
  if (auto r = request_cancel(a, cancel_why); !r) return r;
  if (auto r = health_.implicate_nodes(a, cause, {}, detail); !r) return r;
  return after_attempt_end(a);
}

// ---- site reachability ------------------------------------------------------------------

Result<BrainReply> AttemptTracker::on(const SiteUnreachable& e) {
  auto row = store_.cluster(e.cluster);
  if (!row) return row.error();
  if (!*row) return BrainReply{};
  ClusterRow c = **row;
  if (c.health == SiteHealth::healthy) {
    c.health = SiteHealth::unreachable;
    c.unreachable_since_ms = clock_.now_ms();
    c.message = e.message;
    if (auto r = store_.update_cluster(c); !r) return r.error();
    if (auto r = health_.record_health(c.name, c.health); !r) return r.error();
    auto live = store_.live_attempts(e.cluster);
    if (!live) return live.error();
    for (const auto& a : *live) {
      // Providers usually name the site in their message already.
      std::string msg = e.message.find(e.cluster) != std::string::npos
                            ? e.message
                            : "site " + e.cluster + " is not answering: " + e.message;
      if (auto r = event(a.job_id, a.no, "site-unreachable", msg); !r) {
        return r.error();
      }
    }
  }
  if (auto r = expire_unreachable_sites(); !r) return r.error();
  return BrainReply{};
}

Result<BrainReply> AttemptTracker::on(const SiteReachable& e) {
  auto row = store_.cluster(e.cluster);
  if (!row) return row.error();
  if (!*row || (*row)->health == SiteHealth::healthy) return BrainReply{};
  ClusterRow c = **row;
  c.health = SiteHealth::healthy;
  c.unreachable_since_ms.reset();
  c.message.clear();
  // What its preflight found stays until a preflight passes (site_preflight.cpp).
  if (auto m = core_.misconfigured.find(c.name); m != core_.misconfigured.end()) {
    c.message = m->second;
  }
  if (auto r = store_.update_cluster(c); !r) return r.error();
  if (auto r = health_.record_health(c.name, c.health); !r) return r.error();
  if (auto r = placer_.place_waiting_jobs(); !r) return r.error();
  return BrainReply{};
}

Result<void> AttemptTracker::expire_unreachable_sites() {
  const Millis now = clock_.now_ms();
  auto rows = store_.clusters();
  if (!rows) return rows.error();
  for (auto c : *rows) {
    const ClusterSpec* spec = cluster_spec(c.name);
    if (!spec || c.health != SiteHealth::unreachable || !c.unreachable_since_ms) continue;
    auto grace_ms =
        static_cast<Millis>(std::clamp(spec->unreachable_grace_s, 0.0, 86400.0 * 30) * 1000.0);
    if (now - *c.unreachable_since_ms < grace_ms) continue;
    c.health = SiteHealth::down;
    if (auto r = store_.update_cluster(c); !r) return r;
    if (auto r = health_.record_health(c.name, c.health); !r) return r;
    // A fleet-wide event (no job): the site is declared down (webhooks are told of it).
    if (auto r =
            store_.add_event(std::nullopt, std::nullopt, now, "site-down",
                             "site " + c.name + " is down: silent for " +
                                 std::to_string((now - *c.unreachable_since_ms) / 1000) +
                                 " s, more than its grace of " +
                                 std::to_string(static_cast<long long>(spec->unreachable_grace_s)) +
                                 " s; its jobs resume elsewhere");
        !r) {
      return r.error();
    }
    auto live = store_.live_attempts(c.name);
    if (!live) return live.error();
    for (auto a : *live) {
      // Actions for an attempt we give up on are void; if the site ran it anyway, the
      // reconciliation in on(AttemptObserved) or on(LaunchCompleted) stops it.
      if (auto r = store_.mark_actions_done_for_token(a.token, now); !r) return r;
      std::string detail = "site silent for " +
                           std::to_string((now - *c.unreachable_since_ms) / 1000) + "s, grace " +
                           std::to_string(static_cast<long long>(spec->unreachable_grace_s)) + "s";
      // Its site's first unanswered poll is as late as the brain heard from it.
      if (auto r = end_attempt(a, ExitCause::site_down, detail, c.unreachable_since_ms); !r) {
        return r;
      }
      if (auto r = after_attempt_end(a); !r) return r;
    }
  }
  return Ok{};
}

}  // namespace orch
