// Where the seconds of a recovery go (recovery_breakdown.h).
#include "scheduler/health/recovery_breakdown.h"

#include <algorithm>
#include <cstdio>

namespace orch {
namespace {

double seconds(Millis from, Millis to) {
  return static_cast<double>(std::max<Millis>(0, to - from)) / 1000.0;
}

std::string part(const char* name, std::optional<double> s) {
  if (!s) return std::string(name) + " ...";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %.1f s", name, *s);
  return buf;
}

}  // namespace

RecoveryBreakdown recovery_breakdown(const RecoveryTimes& t) {
  RecoveryBreakdown b;
  // Each part starts where the one before ended, and no later than the next one's end, so
  // that the parts add up to the total whatever order a skewed clock wrote them in.
  const Millis alive = std::min(t.last_alive_ms.value_or(t.ended_ms), t.ended_ms);
  if (t.last_alive_ms) b.detection_s = seconds(alive, t.ended_ms);
  const Millis due =
      std::clamp(t.due_ms.value_or(t.ended_ms), t.ended_ms, std::max(t.ended_ms, t.placed_ms));
  b.backoff_s = seconds(t.ended_ms, due);
  b.placing_s = seconds(due, t.placed_ms);
  const Millis placed = std::max(t.placed_ms, due);
  if (!t.running_ms) return b;
  const Millis running = std::max(*t.running_ms, placed);
  b.site_s = seconds(placed, running);
  if (!t.first_progress_ms) return b;
  const Millis first = std::max(*t.first_progress_ms, running);
  b.startup_s = seconds(running, first);
  b.total_s = seconds(alive, first);
  return b;
}

std::string recovery_text(const RecoveryBreakdown& b) {
  char total[32] = "...";
  if (b.total_s) std::snprintf(total, sizeof total, "%.1f s", *b.total_s);
  return std::string(total) + ": " + part("detection", b.detection_s) + ", " +
         part("backoff", b.backoff_s) + ", " + part("placing", b.placing_s) + ", " +
         part("site", b.site_s) + ", " + part("startup", b.startup_s);
}

}  // namespace orch
