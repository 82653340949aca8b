#include "scheduler/lifecycle/restart_policy.h"

#include <algorithm>
#include <cmath>

namespace orch {

Millis backoff_ms(const BackoffSpec& b, int restart_no) {
  double s = b.initial_s * std::pow(b.multiplier, std::max(0, restart_no - 1));
  // A day at most, whatever the spec says: a nonsense bound must not overflow the conversion.
  s = std::clamp(std::min(s, b.max_s), 0.0, 86400.0);
  return static_cast<Millis>(std::llround(s * 1000.0));
}

AfterExit decide_after_exit(const RestartPolicy& policy, int infra_restarts, int user_restarts,
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
  if (cause == ExitCause::cancelled || cause == ExitCause::priority_preempted ||
      cause == ExitCause::quota_reclaimed || cause == ExitCause::queue_timeout ||
      cause == ExitCause::none) {
    a.verdict = AfterExit::Verdict::ignore;
    return a;
  }
  const bool infra = is_infra_cause(cause);
  const int used = infra ? infra_restarts : user_restarts;
  const int max = infra ? policy.max_infra_restarts : policy.max_user_restarts;
  const std::string budget = infra ? "infra" : "user";
  if (used >= max) {
    a.verdict = AfterExit::Verdict::fail;
    a.reason = cause_name + ": " + budget + " restart budget spent (" + std::to_string(used) +
               " of " + std::to_string(max) + ")";
    return a;
  }
  a.verdict = AfterExit::Verdict::resume;
  a.spends_infra = infra;
  a.delay_ms = backoff_ms(policy.backoff, used + 1);
  a.reason = cause_name + ": " + budget + " restart " + std::to_string(used + 1) + " of " +
             std::to_string(max);
  return a;
}

}  // namespace orch
