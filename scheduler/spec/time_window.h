#pragma once
// Transfer windows (issue 5): "HH:MM-HH:MM" in UTC, when dataset transfers may touch a site.
// Here in the spec library because the clusters parser validates `data.windows` with it;
// scheduler/data/throttle.h includes it for the transfer controller.
//
//   "22:00-06:00"  end before start: wraps past midnight (22:00 up to, not including, 06:00)
//   "00:00-24:00"  the whole day; 24:00 is allowed only as an end
//   "06:00-06:00"  refused: empty or the whole day? write 00:00-24:00 for the whole day
//
// Hours and minutes are exactly two digits each; no spaces, no seconds.

#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/common/result.h"

namespace orch {

struct TimeWindow {
  int start_min = 0;  // minutes after midnight, 0..1439
  int end_min = 0;    // minutes after midnight, 0..1440, != start_min

  // Whether a minute of the day (0..1439) falls in the window: [start, end), wrapping midnight
  // when end < start.
  bool contains(int minute_of_day) const;
};

// What a window looks like, for "expected ..." in messages.
inline constexpr std::string_view kWindowExpected =
    "a UTC window \"HH:MM-HH:MM\" such as \"22:00-06:00\"";

// Refuses a malformed window with ErrorKind::invalid and a message naming the problem, e.g.
// `window "25:00-06:00": hour 25 is not 00..23` (no "expected" part: callers add their own).
Result<TimeWindow> parse_window(const std::string& text);

// True when there are no windows, or utc_ms falls in one of them. Malformed windows never match
// (the parser refuses them when the file is loaded).
bool in_windows(const std::vector<std::string>& windows, Millis utc_ms);

}  // namespace orch
