#include "scheduler/lifecycle/restart_history.h"

namespace orch {
namespace {

// The step an attempt started from; -1 for a start from the beginning.
std::int64_t resumed_step(const AttemptRow& a) {
  return a.resumed_from_step.value_or(-1);
}

bool ran_healthy(const AttemptRow& a, double healthy_after_s, Millis now) {
  const Millis from = a.running_ms.value_or(a.started_ms);
  const Millis to = a.ended_ms.value_or(now);
  return healthy_after_s > 0 && static_cast<double>(to - from) >= healthy_after_s * 1000.0;
}

}  // namespace

std::vector<EndedAttempt> restart_history(const std::vector<AttemptRow>& attempts,
                                          const std::optional<CheckpointRow>& latest,
                                          double healthy_after_s, Millis now) {
  std::vector<EndedAttempt> out;
  out.reserve(attempts.size());
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const AttemptRow& a = attempts[i];
    bool saved_newer = false;
    if (i + 1 < attempts.size()) {
      saved_newer = resumed_step(attempts[i + 1]) > resumed_step(a);
    } else if (latest) {
      saved_newer = latest->attempt_id == a.id && latest->step > resumed_step(a);
    }
    out.push_back({a.cause, saved_newer || ran_healthy(a, healthy_after_s, now)});
  }
  return out;
}

}  // namespace orch
