#pragma once
// Where the seconds of a recovery go (issue 38): from the last sign of life of an attempt that
// was interrupted to the first progress line of the attempt that followed it, in the parts that
// each have an owner.
//
//   last sign of life --detection--> verdict --backoff--> due --placing--> placed
//     --site--> running --startup--> first progress line
//
// detection: the site or the heartbeats telling orchestrate (the verdict is when the brain
// ended the attempt); backoff: the restart policy's wait; placing: the brain finding room and a
// copy to resume from (a tick, staging, a full fleet); site: the site's queue and launch until
// it reports the run; startup: the job's own start (loading the model and the checkpoint) until
// its first progress line is seen, which includes up to one of its reporting intervals.

#include <optional>
#include <string>

#include "scheduler/common/clock.h"

namespace orch {

// The ended attempt's times and the next attempt's.
struct RecoveryTimes {
  std::optional<Millis> last_alive_ms;      // the ended attempt's last sign of life
  Millis ended_ms = 0;                      // the verdict that ended it
  std::optional<Millis> due_ms;             // the next attempt's backoff ended (nullopt: none)
  Millis placed_ms = 0;                     // the next attempt was placed
  std::optional<Millis> running_ms;         // ... seen running at its site
  std::optional<Millis> first_progress_ms;  // ... its first progress line seen
};

// Seconds; a part whose end has not happened yet is nullopt, and so is the total then. A clock
// that went backwards between two times makes that part 0, never negative.
struct RecoveryBreakdown {
  std::optional<double> detection_s;  // nullopt when the last sign of life is unknown
  double backoff_s = 0;
  double placing_s = 0;
  std::optional<double> site_s;
  std::optional<double> startup_s;
  std::optional<double> total_s;  // from the last sign of life (or the verdict) to the first line
};

RecoveryBreakdown recovery_breakdown(const RecoveryTimes& t);

// "31.2 s: detection 28.0 s, backoff 0 s, placing 0.1 s, site 1.1 s, startup 2.0 s"; a part not
// over yet reads "...".
std::string recovery_text(const RecoveryBreakdown& b);

}  // namespace orch
