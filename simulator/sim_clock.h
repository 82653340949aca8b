#pragma once
// Where simulated time meets the brain's clock, shared by every policy's driver: second 0 of a
// simulation is a fixed wall-clock instant, so that runs are reproducible, and polls fall on a
// grid of the poll interval as a worker's rounds do.

#include <cmath>
#include <cstdint>

namespace orch::sim {

inline constexpr std::int64_t kSimEpochMs = 1'767'225'600'000;  // 2026-01-01T00:00:00Z

inline std::int64_t sim_ms(double t) {
  return kSimEpochMs + static_cast<std::int64_t>(std::llround(t * 1000));
}

// The first poll of a site whose worker polls every `every` seconds that sees a change at
// `change`, given that it last polled at `last` (< 0: never): on the grid, never before the
// next round.
inline double next_poll(double change, double last, double every) {
  if (last < 0) return 0;
  const double on_grid = std::ceil(change / every) * every;
  return std::max(on_grid, last + every);
}

}  // namespace orch::sim
