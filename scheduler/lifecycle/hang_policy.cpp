#include "scheduler/lifecycle/hang_policy.h"

#include <algorithm>
#include <cmath>

namespace orch {
namespace {

Millis to_ms(double s) {
  return static_cast<Millis>(std::llround(std::max(0.0, s) * 1000.0));
}

}  // namespace

HangLimits hang_limits_for(const HealthWatchSpec& health) {
  HangLimits limits;
  if (health.expect_progress) limits.startup_timeout_ms = to_ms(health.startup_timeout_s);
  if (health.hang_after_s) {
    limits.hang_after_ms = to_ms(*health.hang_after_s);
  } else {
    limits.watch.adaptive = true;
    limits.hang_after_ms = kMinAdaptiveHangMs;
  }
  return limits;
}

std::optional<double> median_step_s(const HangWatch& watch) {
  if (watch.steps_s.empty()) return std::nullopt;
  std::vector<double> sorted = watch.steps_s;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

Millis note_step_time(HangWatch& watch, Millis hang_after_ms, double step_s) {
  if (!watch.adaptive || !(step_s > 0) || !std::isfinite(step_s)) return hang_after_ms;
  watch.steps_s.push_back(step_s);
  if (watch.steps_s.size() > kHangStepSamples) watch.steps_s.erase(watch.steps_s.begin());
  const double median = *median_step_s(watch);
  // A step time of days is a typo or a clock jump; the cap keeps the product in range.
  const double allowed_s = std::min(kHangStepFactor * median, 30 * 86'400.0);
  return std::max(kMinAdaptiveHangMs, to_ms(allowed_s));
}

}  // namespace orch
