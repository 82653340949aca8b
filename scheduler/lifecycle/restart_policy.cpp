#include "scheduler/lifecycle/restart_policy.h"

#include <algorithm>
#include <cmath>

namespace orch {
namespace {

// Endings that resume the job without spending a restart: nothing to decide, nothing counted.
bool spends_nothing(ExitCause cause) {
  return cause == ExitCause::succeeded || cause == ExitCause::cancelled ||
         cause == ExitCause::priority_preempted || cause == ExitCause::quota_reclaimed ||
         cause == ExitCause::queue_timeout || cause == ExitCause::site_misconfigured ||
         cause == ExitCause::none;
}

}  // namespace

Millis backoff_ms(const BackoffSpec& b, int restart_no) {
  double s = b.initial_s * std::pow(b.multiplier, std::max(0, restart_no - 1));
  // A day at most, whatever the spec says: a nonsense bound must not overflow the conversion.
  s = std::clamp(std::min(s, b.max_s), 0.0, 86400.0);
  return static_cast<Millis>(std::llround(s * 1000.0));
}

int failure_streak(const std::vector<EndedAttempt>& history) {
  if (history.empty()) return 0;
  const bool infra = is_infra_cause(history.back().cause);
  int streak = 0;
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (spends_nothing(it->cause)) {
      if (it->made_progress) break;
      continue;
    }
    if (is_infra_cause(it->cause) != infra) break;
    ++streak;
    if (it->made_progress) break;
  }
  return std::max(streak, 1);
}

AfterExit decide_after_exit(const RestartPolicy& policy, int streak, int user_restarts,
                            ExitCause cause) {
  AfterExit a;
  const std::string cause_name(to_string(cause));
  if (cause == ExitCause::succeeded) {
    a.verdict = AfterExit::Verdict::succeed;
    a.reason = "finished";
    return a;
  }
  // A preemption for priority or quota, or a move off a long queue, resumes the job itself (no
  // restart spent): nothing to decide.
  if (spends_nothing(cause)) {
    a.verdict = AfterExit::Verdict::ignore;
    return a;
  }
  streak = std::max(streak, 1);
  const bool infra = is_infra_cause(cause);
  if (infra ? streak > policy.max_infra_restarts : user_restarts >= policy.max_user_restarts) {
    a.verdict = AfterExit::Verdict::fail;
    a.reason = infra
                   ? cause_name + ": infra restart budget spent (" + std::to_string(streak - 1) +
                         " of " + std::to_string(policy.max_infra_restarts) +
                         " restarts in a row without progress)"
                   : cause_name + ": user restart budget spent (" + std::to_string(user_restarts) +
                         " of " + std::to_string(policy.max_user_restarts) + ")";
    return a;
  }
  a.verdict = AfterExit::Verdict::resume;
  a.spends_infra = infra;
  // The wait grows with the failures in a row, and starts again after progress. The first
  // infra failure after progress resumes at once: a node or a site failed, not the job, and
  // every second waited is a second the whole gang is idle (issue 38). A user failure waits from
  // the first: a crash loop must not spin.
  if (infra) {
    a.delay_ms = streak == 1 ? 0 : backoff_ms(policy.backoff, streak - 1);
  } else {
    a.delay_ms = backoff_ms(policy.backoff, streak);
  }
  a.reason = infra ? cause_name + ": infra restart " + std::to_string(streak) + " of " +
                         std::to_string(policy.max_infra_restarts) +
                         (streak > 1 ? " in a row without progress" : "")
                   : cause_name + ": user restart " + std::to_string(user_restarts + 1) + " of " +
                         std::to_string(policy.max_user_restarts);
  return a;
}

}  // namespace orch
