#include "scheduler/lifecycle/job_stats.h"

#include <algorithm>

namespace orch {

std::int64_t steps_lost_between(const AttemptRow& previous,
                                std::optional<std::int64_t> resume_step) {
  if (!previous.last_step) return 0;
  std::int64_t kept = resume_step.value_or(0);
  // Steps the previous attempt did itself start at first_step; anything it did past the
  // checkpoint the next attempt resumes from is done again.
  std::int64_t lost = *previous.last_step - std::max(kept, previous.first_step.value_or(1) - 1);
  return std::max<std::int64_t>(lost, 0);
}

JobStats compute_job_stats(const std::vector<AttemptRow>& attempts, Millis now) {
  JobStats s;
  if (attempts.empty()) return s;
  double productive = 0;
  bool any_time = false;
  for (const auto& a : attempts) {
    s.steps_lost += a.steps_lost;
    if (!a.first_step || !a.last_step || a.step_time_total <= 0) continue;
    double done = static_cast<double>(*a.last_step - *a.first_step + 1);
    double kept = std::max(0.0, done - static_cast<double>(a.steps_lost));
    productive += a.step_time_total * (done > 0 ? kept / done : 0.0);
    any_time = true;
  }
  // Wall clock ends now while any attempt has not ended (a reinstated attempt is older than the
  // duplicate it outlived), else at the latest end.
  Millis start = attempts.front().started_ms;
  Millis end = 0;
  for (const auto& a : attempts) {
    end = std::max(end, a.ended_ms.value_or(now));
  }
  double wall = static_cast<double>(end - start) / 1000.0;
  if (any_time && wall > 0) {
    s.productive_s = productive;
    s.wall_s = wall;
    s.ettr = std::clamp(productive / wall, 0.0, 1.0);
  }
  return s;
}

std::optional<double> measured_step_s(const std::vector<AttemptRow>& attempts) {
  for (auto it = attempts.rbegin(); it != attempts.rend(); ++it) {
    const AttemptRow& a = *it;
    if (!a.first_step || !a.last_step || !a.running_ms || !a.last_progress_ms) continue;
    const std::int64_t steps = *a.last_step - *a.first_step + 1;
    const Millis wall = *a.last_progress_ms - *a.running_ms;
    if (steps < 2 || wall <= 0) continue;
    return static_cast<double>(wall) / 1000.0 / static_cast<double>(steps);
  }
  return std::nullopt;
}

}  // namespace orch
