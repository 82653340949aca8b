#pragma once
// The two clocks the agent reads: wall time for the records it writes (at_ms), and a monotonic
// clock for the intervals it keeps (heartbeats, hang detection, timeouts), which must not jump
// when an administrator or NTP sets the wall clock.

#include <chrono>
#include <cstdint>

namespace orch::agent {

// Wall-clock milliseconds since the Unix epoch.
inline std::int64_t wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// Monotonic milliseconds from an arbitrary start.
inline std::int64_t steady_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

// Monotonic seconds, for timing short measurements.
inline double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace orch::agent
