#pragma once
// When a running attempt counts as hung (issue 14, docs/health.md "Hangs"). Pure.
//
// - Before its first progress line a job is never hung, unless its spec sets expect_progress:
//   then it has startup_timeout_s (default 30 min) to print one (loading data, compiling).
// - After it, a job is hung when silent longer than its spec's hang_after_s, or, when the spec
//   leaves that unset, longer than max(60 s, 20 x the median of its recent step times): long
//   enough for a slow step or a checkpoint save, short enough to beat the provider's own
//   detection (Slurm's SlurmdTimeout is 300 s on most clusters).
// The thresholds are kept on the attempt row (hang_after_ms, startup_timeout_ms) so that the
// brain finds silent attempts with one query, whatever the number of healthy ones.

#include <cstddef>
#include <optional>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/model/hang_watch.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

inline constexpr Millis kMinAdaptiveHangMs = 60'000;
inline constexpr double kHangStepFactor = 20.0;
inline constexpr std::size_t kHangStepSamples = 32;  // the newest step times kept

struct HangLimits {
  Millis startup_timeout_ms = 0;  // before the first progress line; 0: never hung then
  Millis hang_after_ms = 0;       // after it; 0: never
  HangWatch watch;
};

// The limits a new attempt of this job starts with.
HangLimits hang_limits_for(const HealthWatchSpec& health);

// Notes a step time (seconds, > 0) and returns the new hang_after_ms (unchanged when fixed).
Millis note_step_time(HangWatch& watch, Millis hang_after_ms, double step_s);

// The median of the kept step times; nullopt when none.
std::optional<double> median_step_s(const HangWatch& watch);

}  // namespace orch
