// Transfer windows (time_window.h).
#include "scheduler/spec/time_window.h"

#include <optional>

namespace orch {
namespace {

constexpr int kDayMin = 24 * 60;
constexpr Millis kMinuteMs = 60'000;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// "HH:MM" -> minutes after midnight, or an explanation of what is wrong with it.
struct ClockTime {
  std::optional<int> minutes;
  std::string problem;
};

ClockTime parse_clock(std::string_view s, std::string_view which, bool is_end) {
  if (s.size() != 5 || !is_digit(s[0]) || !is_digit(s[1]) || s[2] != ':' || !is_digit(s[3]) ||
      !is_digit(s[4])) {
    return {std::nullopt, "the " + std::string(which) + " \"" + std::string(s) + "\" is not HH:MM"};
  }
  const int h = (s[0] - '0') * 10 + (s[1] - '0');
  const int m = (s[3] - '0') * 10 + (s[4] - '0');
  if (m > 59) {
    return {std::nullopt, "minute " + std::string(s.substr(3)) + " is not 00..59"};
  }
  if (h == 24 && m == 0 && is_end) return {kDayMin, ""};
  if (h > 23) {
    return {std::nullopt, "hour " + std::string(s.substr(0, 2)) + " is not 00..23" +
                              (is_end ? " (24:00 is allowed as an end)" : "")};
  }
  return {h * 60 + m, ""};
}

}  // namespace

bool TimeWindow::contains(int minute_of_day) const {
  if (start_min < end_min) return minute_of_day >= start_min && minute_of_day < end_min;
  return minute_of_day >= start_min || minute_of_day < end_min;  // wraps past midnight
}

Result<TimeWindow> parse_window(const std::string& text) {
  const std::string head = "window \"" + text + "\": ";
  const auto dash = text.find('-');
  if (dash == std::string::npos || text.find('-', dash + 1) != std::string::npos) {
    return make_error(ErrorKind::invalid, head + "not two times joined by \"-\"");
  }
  const std::string_view all(text);
  ClockTime start = parse_clock(all.substr(0, dash), "start", false);
  if (!start.minutes) return make_error(ErrorKind::invalid, head + start.problem);
  ClockTime end = parse_clock(all.substr(dash + 1), "end", true);
  if (!end.minutes) return make_error(ErrorKind::invalid, head + end.problem);
  if (*start.minutes == *end.minutes) {
    return make_error(ErrorKind::invalid,
                      head + "start and end are the same (write 00:00-24:00 for the whole day)");
  }
  return TimeWindow{*start.minutes, *end.minutes};
}

bool in_windows(const std::vector<std::string>& windows, Millis utc_ms) {
  if (windows.empty()) return true;
  Millis minute = utc_ms / kMinuteMs;
  if (utc_ms % kMinuteMs < 0) minute -= 1;  // floor, not truncation, before 1970
  minute %= kDayMin;
  if (minute < 0) minute += kDayMin;
  for (const std::string& w : windows) {
    auto parsed = parse_window(w);
    if (parsed.ok() && parsed->contains(static_cast<int>(minute))) return true;
  }
  return false;
}

}  // namespace orch
