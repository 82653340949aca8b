// MFU-aware throttling (throttle.h): one AIMD step on a transfer's cap.
#include "scheduler/data/throttle.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace orch {
namespace {

constexpr double kMB = 1e6;
// An uncapped transfer's cap is lifted again once it exceeds this many times the measured rate.
constexpr double kUncapFactor = 4.0;

std::string mb_s(double bps) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", bps / kMB);
  return buf;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// "alpha", "alpha and beta", "alpha, beta and gamma".
std::string join_and(const std::set<std::string>& names) {
  std::string out;
  std::size_t i = 0;
  for (const std::string& n : names) {
    if (i > 0) out += (i + 1 == names.size()) ? " and " : ", ";
    out += n;
    ++i;
  }
  return out;
}

ThrottleDecision cut(const ThrottleState& state, const JobMfuReading& worst,
                     const ThrottleSpec& spec) {
  ThrottleDecision d;
  const bool uncapped = state.cap_bps <= 0;
  const double current = uncapped ? state.measured_bps : state.cap_bps;
  if (current <= 0) return d;  // an uncapped transfer with no measured rate: nothing to cut from
  const double floor_bps = spec.min_mb_s * kMB;
  const double next = std::max(floor_bps, current * spec.decrease);
  if (!uncapped && next >= state.cap_bps) return d;  // already at the floor
  d.change = ThrottleChange::cut;
  d.new_cap_bps = next;
  d.job_id = worst.job_id;
  const double below = (1.0 - worst.recent / worst.baseline) * 100.0;
  d.why = "job " + std::to_string(worst.job_id) + "'s MFU " + fixed(worst.recent, 3) + " is " +
          fixed(below, 1) + "% below its baseline " + fixed(worst.baseline, 3) + " on " +
          worst.cluster + ": " +
          (uncapped ? "uncapped (measured " + mb_s(current) + " MB/s)" : "cap " + mb_s(current)) +
          " -> " + mb_s(next) + " MB/s";
  return d;
}

ThrottleDecision raise(const ThrottleState& state, const std::set<std::string>& sites,
                       const ThrottleSpec& spec) {
  ThrottleDecision d;
  const double cap = state.cap_bps;
  const double base = state.base_cap_bps;
  if (cap <= 0) return d;                 // uncapped: nothing to raise
  if (base > 0 && cap >= base) return d;  // at its base already
  const std::string holds =
      sites.empty() ? "no job's MFU to watch" : "MFU holds on " + join_and(sites);
  const double step =
      spec.increase_mb_s > 0 ? spec.increase_mb_s * kMB : (base > 0 ? base : cap) / 10;
  d.change = ThrottleChange::raise;
  if (base > 0) {
    d.new_cap_bps = std::min(base, cap + step);
    d.why = holds + ": cap " + mb_s(cap) + " -> " + mb_s(d.new_cap_bps) + " MB/s";
    return d;
  }
  const double next = cap + step;
  if (state.measured_bps > 0 && next > kUncapFactor * state.measured_bps) {
    d.new_cap_bps = 0;
    d.why = holds + ": cap " + mb_s(cap) + " MB/s -> uncapped (over 4x the measured " +
            mb_s(state.measured_bps) + " MB/s)";
    return d;
  }
  d.new_cap_bps = next;
  d.why = holds + ": cap " + mb_s(cap) + " -> " + mb_s(next) + " MB/s";
  return d;
}

}  // namespace

ThrottleDecision throttle_step(const ThrottleState& state, const std::vector<JobMfuReading>& jobs,
                               const ThrottleSpec& spec, Millis now) {
  if (state.last_change_ms &&
      static_cast<double>(now - *state.last_change_ms) < spec.interval_s * 1000.0) {
    return {};
  }
  const double keep = 1.0 - spec.mfu_drop_percent / 100.0;
  const JobMfuReading* worst = nullptr;
  double worst_ratio = 0;
  std::set<std::string> sites;
  for (const JobMfuReading& job : jobs) {
    if (!(job.baseline > 0)) continue;
    sites.insert(job.cluster);
    if (!(job.recent < job.baseline * keep)) continue;
    const double ratio = job.recent / job.baseline;
    if (!worst || ratio < worst_ratio || (ratio == worst_ratio && job.job_id < worst->job_id)) {
      worst = &job;
      worst_ratio = ratio;
    }
  }
  if (worst) return cut(state, *worst, spec);
  return raise(state, sites, spec);
}

std::optional<double> recent_mfu(const MfuWatchState& state, int n) {
  if (!state.baseline || state.window.empty()) return std::nullopt;
  // Work over time, as the baseline it is compared with (mfu_watch.h).
  return mfu_over_time(state.window, state.window_s, static_cast<std::size_t>(std::max(n, 1)));
}

}  // namespace orch
