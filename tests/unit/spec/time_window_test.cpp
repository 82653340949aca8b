// Transfer windows "HH:MM-HH:MM" in UTC (scheduler/spec/time_window.h).
#include "scheduler/spec/time_window.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace orch {
namespace {

using ::testing::HasSubstr;

constexpr Millis kMinute = 60'000;
constexpr Millis kDay = 24 * 60 * kMinute;
constexpr Millis kMidnight = 20'000 * kDay;  // some UTC midnight

Millis at(int h, int m) {
  return kMidnight + (h * 60 + m) * kMinute;
}

TEST(TimeWindow, ParsesStartAndEnd) {
  auto w = parse_window("09:30-17:45");
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->start_min, 9 * 60 + 30);
  EXPECT_EQ(w->end_min, 17 * 60 + 45);
}

TEST(TimeWindow, StartIsInsideEndIsNot) {
  const std::vector<std::string> day = {"09:00-17:00"};
  EXPECT_FALSE(in_windows(day, at(8, 59)));
  EXPECT_TRUE(in_windows(day, at(9, 0)));
  EXPECT_TRUE(in_windows(day, at(16, 59) + 59'999));
  EXPECT_FALSE(in_windows(day, at(17, 0)));
}

TEST(TimeWindow, EndBeforeStartWrapsPastMidnight) {
  const std::vector<std::string> night = {"22:00-06:00"};
  EXPECT_TRUE(in_windows(night, at(22, 0)));
  EXPECT_TRUE(in_windows(night, at(23, 59)));
  EXPECT_TRUE(in_windows(night, at(0, 0)));
  EXPECT_TRUE(in_windows(night, at(5, 59)));
  EXPECT_FALSE(in_windows(night, at(6, 0)));
  EXPECT_FALSE(in_windows(night, at(12, 0)));
  EXPECT_FALSE(in_windows(night, at(21, 59)));
  EXPECT_TRUE(in_windows(night, at(1, 0) + 3 * kDay));  // any day
}

TEST(TimeWindow, WholeDayAndSeveralWindows) {
  EXPECT_TRUE(in_windows({"00:00-24:00"}, at(0, 0)));
  EXPECT_TRUE(in_windows({"00:00-24:00"}, at(23, 59)));
  const std::vector<std::string> two = {"01:00-02:00", "13:00-14:00"};
  EXPECT_TRUE(in_windows(two, at(13, 30)));
  EXPECT_FALSE(in_windows(two, at(12, 30)));
}

TEST(TimeWindow, NoWindowsMeansAnyTime) {
  EXPECT_TRUE(in_windows({}, at(12, 0)));
}

TEST(TimeWindow, MalformedWindowsNeverMatch) {
  EXPECT_FALSE(in_windows({"nightly"}, at(23, 0)));
  EXPECT_TRUE(in_windows({"nightly", "22:00-23:30"}, at(23, 0)));
}

TEST(TimeWindow, TimesBefore1970AreStillUtcTimesOfDay) {
  EXPECT_TRUE(in_windows({"23:00-24:00"}, -kMinute));  // 23:59 on 31 Dec 1969
  EXPECT_FALSE(in_windows({"00:00-23:00"}, -kMinute));
}

struct BadWindow {
  const char* text;
  const char* problem;
};

class ParseWindow : public ::testing::TestWithParam<BadWindow> {};

TEST_P(ParseWindow, RefusesWithAMessageNamingTheProblem) {
  auto w = parse_window(GetParam().text);
  ASSERT_FALSE(w.ok()) << GetParam().text;
  EXPECT_EQ(w.error().kind, ErrorKind::invalid);
  EXPECT_EQ(w.error().message,
            "window \"" + std::string(GetParam().text) + "\": " + GetParam().problem);
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, ParseWindow,
    ::testing::Values(
        BadWindow{"", "not two times joined by \"-\""},
        BadWindow{"22:00", "not two times joined by \"-\""},
        BadWindow{"22:00-06:00-07:00", "not two times joined by \"-\""},
        BadWindow{"9:00-17:00", "the start \"9:00\" is not HH:MM"},
        BadWindow{"09:00-5pm", "the end \"5pm\" is not HH:MM"},
        BadWindow{"22:00 - 06:00", "the start \"22:00 \" is not HH:MM"},
        BadWindow{"25:00-06:00", "hour 25 is not 00..23"},
        BadWindow{"22:00-24:30", "hour 24 is not 00..23 (24:00 is allowed as an end)"},
        BadWindow{"22:00-25:00", "hour 25 is not 00..23 (24:00 is allowed as an end)"},
        BadWindow{"24:00-06:00", "hour 24 is not 00..23"},
        BadWindow{"10:60-11:00", "minute 60 is not 00..59"},
        BadWindow{"06:00-06:00",
                  "start and end are the same (write 00:00-24:00 for the whole day)"}));

}  // namespace
}  // namespace orch
