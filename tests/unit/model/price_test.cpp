// The price of GPU-hours (scheduler/model/price.h): the price at an instant, the exact cost of a
// span across windows and midnights, a contract's committed spend, and UTC months.
#include "scheduler/model/price.h"

#include <gmock/gmock.h>

#include <chrono>

namespace orch {
namespace {

using namespace std::chrono;

// A UTC instant, in milliseconds since the epoch.
Millis utc(int y, unsigned m, unsigned d, int hour = 0, int minute = 0) {
  const sys_days day{year{y} / month{m} / std::chrono::day{d}};
  return duration_cast<milliseconds>(day.time_since_epoch() + hours{hour} + minutes{minute})
      .count();
}

constexpr Millis kHour = 3'600'000;

PriceSpec base(double per_gpu_hour) {
  PriceSpec p;
  p.configured = true;
  p.per_gpu_hour = per_gpu_hour;
  return p;
}

// 2.10 by day, 1.40 from 22:00 up to 06:00 (a window that wraps midnight).
PriceSpec with_night_rate() {
  PriceSpec p = base(2.10);
  p.windows.push_back(PriceWindow{"22:00-06:00", 22 * 60, 6 * 60, 1.40});
  return p;
}

TEST(Price, AClusterWithoutAPriceCostsNothing) {
  PriceSpec none;
  none.per_gpu_hour = 5;  // not configured: ignored
  EXPECT_EQ(price_at(none, utc(2026, 12, 1, 12)), 0);
  EXPECT_EQ(cost_of(none, utc(2026, 12, 1), utc(2026, 12, 2), 8), 0);
}

TEST(Price, CostIsThePriceTimesHoursTimesGpus) {
  EXPECT_NEAR(cost_of(base(2.10), utc(2026, 12, 1, 9), utc(2026, 12, 1, 12), 8), 50.40, 1e-9);
  EXPECT_NEAR(cost_of(base(2.10), 0, 90 * 60'000, 1), 3.15, 1e-12);  // 90 minutes
}

TEST(Price, AnEmptyOrBackwardSpanCostsNothing) {
  EXPECT_EQ(cost_of(base(2.10), utc(2026, 12, 1, 12), utc(2026, 12, 1, 12), 8), 0);
  EXPECT_EQ(cost_of(base(2.10), utc(2026, 12, 1, 12), utc(2026, 12, 1, 9), 8), 0);
  EXPECT_EQ(cost_of(with_night_rate(), utc(2026, 12, 1, 12), utc(2026, 12, 1, 9), 8), 0);
}

TEST(Price, ANightWindowThatWrapsMidnightCoversBothSidesOfIt) {
  const PriceSpec p = with_night_rate();
  EXPECT_DOUBLE_EQ(price_at(p, utc(2026, 12, 1, 21, 59)), 2.10);
  EXPECT_DOUBLE_EQ(price_at(p, utc(2026, 12, 1, 22, 0)), 1.40);
  EXPECT_DOUBLE_EQ(price_at(p, utc(2026, 12, 1, 23, 30)), 1.40);
  EXPECT_DOUBLE_EQ(price_at(p, utc(2026, 12, 2, 0, 0)), 1.40);
  EXPECT_DOUBLE_EQ(price_at(p, utc(2026, 12, 2, 5, 59)), 1.40);
  EXPECT_DOUBLE_EQ(price_at(p, utc(2026, 12, 2, 6, 0)), 2.10);  // the end is not in the window
}

TEST(Price, ASpanAcrossWindowsAndMidnightIsSplitAtEveryEdge) {
  // 20:00 to 08:00 the next day on 1 GPU: 2 h by day, 8 h by night, 2 h by day.
  const double expected = 2 * 2.10 + 8 * 1.40 + 2 * 2.10;
  EXPECT_NEAR(cost_of(with_night_rate(), utc(2026, 12, 1, 20), utc(2026, 12, 2, 8), 1), expected,
              1e-9);
  // Partial minutes at both ends: 21:30 to 22:30 on 4 GPUs is half an hour at each rate.
  EXPECT_NEAR(cost_of(with_night_rate(), utc(2026, 12, 1, 21, 30), utc(2026, 12, 1, 22, 30), 4),
              4 * (0.5 * 2.10 + 0.5 * 1.40), 1e-9);
}

TEST(Price, WholeDaysCostSixteenDayHoursAndEightNightHoursEach) {
  EXPECT_NEAR(cost_of(with_night_rate(), utc(2026, 12, 30), utc(2027, 1, 2), 2),
              3 * 2 * (16 * 2.10 + 8 * 1.40), 1e-9);
}

TEST(Price, TheFirstWindowThatCoversAMinuteWins) {
  PriceSpec p = with_night_rate();
  p.windows.push_back(PriceWindow{"00:00-24:00", 0, 1440, 9.0});
  EXPECT_DOUBLE_EQ(price_at(p, utc(2026, 12, 1, 23)), 1.40);
  EXPECT_DOUBLE_EQ(price_at(p, utc(2026, 12, 1, 12)), 9.0);
  EXPECT_NEAR(cost_of(p, utc(2026, 12, 1), utc(2026, 12, 2), 1), 8 * 1.40 + 16 * 9.0, 1e-9);
}

TEST(Price, AContractCommitsItsGpusOnlyWhereTheSpanOverlapsIt) {
  PriceSpec p = base(2.0);
  EXPECT_EQ(committed_cost(p, 16, utc(2026, 12, 1), utc(2026, 12, 3)), 0);  // no contract
  p.contract_start = "2026-12-01";
  p.contract_end = "2027-03-01";
  p.contract_start_ms = utc(2026, 12, 1);
  p.contract_end_ms = utc(2027, 3, 1);
  // From mid-November to 3 December: the contract's first 48 hours.
  EXPECT_NEAR(committed_cost(p, 16, utc(2026, 11, 15), utc(2026, 12, 3)), 16 * 48 * 2.0, 1e-9);
  // Across its end: its last day.
  EXPECT_NEAR(committed_cost(p, 16, utc(2027, 2, 28), utc(2027, 3, 10)), 16 * 24 * 2.0, 1e-9);
  EXPECT_EQ(committed_cost(p, 16, utc(2026, 10, 1), utc(2026, 11, 1)), 0);
  EXPECT_EQ(committed_cost(p, 16, utc(2027, 3, 1), utc(2027, 4, 1)), 0);
}

TEST(Price, ACommittedSpendAppliesTheWindows) {
  PriceSpec p = with_night_rate();
  p.contract_start_ms = utc(2026, 12, 1);
  p.contract_end_ms = utc(2026, 12, 2);
  EXPECT_NEAR(committed_cost(p, 8, utc(2026, 11, 1), utc(2027, 1, 1)), 8 * (16 * 2.10 + 8 * 1.40),
              1e-9);
}

TEST(Price, MonthsAreUtcCalendarMonths) {
  EXPECT_EQ(month_of(utc(2026, 12, 31, 23, 59) + 59'999), "2026-12");
  EXPECT_EQ(month_of(utc(2027, 1, 1)), "2027-01");
  EXPECT_EQ(month_start_ms(utc(2026, 12, 17, 13, 5)), utc(2026, 12, 1));
  EXPECT_EQ(month_start_ms(utc(2026, 12, 1)), utc(2026, 12, 1));
  EXPECT_EQ(next_month_start_ms(utc(2026, 12, 31, 23, 59)), utc(2027, 1, 1));
  EXPECT_EQ(next_month_start_ms(utc(2027, 1, 1)), utc(2027, 2, 1));
  EXPECT_EQ(next_month_start_ms(utc(2028, 2, 29, 12)), utc(2028, 3, 1));  // a leap February
  EXPECT_EQ(next_month_start_ms(utc(2026, 12, 1)) - utc(2026, 12, 1), 31 * 24 * kHour);
}

}  // namespace
}  // namespace orch
