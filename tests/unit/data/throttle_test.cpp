// MFU-aware throttling of a transfer's cap (throttle.h): AIMD, one change per interval.
#include "scheduler/data/throttle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace orch {
namespace {

using ::testing::Optional;

constexpr double kMB = 1e6;
constexpr Millis kT0 = 1'700'000'000'000;

// Defaults: 3% drop, halve, +base/10, floor 1 MB/s, 10 s between changes.
ThrottleSpec spec() {
  return ThrottleSpec{};
}

ThrottleState capped(double cap_mb_s, double base_mb_s, std::optional<Millis> last = std::nullopt) {
  ThrottleState s;
  s.cap_bps = cap_mb_s * kMB;
  s.base_cap_bps = base_mb_s * kMB;
  s.measured_bps = cap_mb_s * kMB;
  s.last_change_ms = last;
  return s;
}

JobMfuReading job(std::int64_t id, std::string cluster, double baseline, double recent) {
  return JobMfuReading{id, std::move(cluster), baseline, recent};
}

TEST(Throttle, MfuDropCutsTheCapByTheDecrease) {
  auto d = throttle_step(capped(40, 40), {job(7, "alpha", 0.350, 0.310)}, spec(), kT0);
  EXPECT_EQ(d.change, ThrottleChange::cut);
  EXPECT_DOUBLE_EQ(d.new_cap_bps, 20 * kMB);
  EXPECT_EQ(d.job_id, 7);
  EXPECT_EQ(d.why,
            "job 7's MFU 0.310 is 11.4% below its baseline 0.350 on alpha: cap 40.0 -> "
            "20.0 MB/s");
}

TEST(Throttle, DropWithinTheThresholdHolds) {
  // 2.9% below a 3% threshold: not a drop. The cap is at its base, so nothing changes.
  auto d = throttle_step(capped(40, 40), {job(1, "alpha", 1.0, 0.971)}, spec(), kT0);
  EXPECT_EQ(d.change, ThrottleChange::none);
  EXPECT_TRUE(d.why.empty());
}

TEST(Throttle, TheWorstJobIsNamed) {
  auto d = throttle_step(
      capped(40, 40),
      {job(1, "alpha", 0.5, 0.48), job(2, "beta", 0.5, 0.30), job(3, "alpha", 0.5, 0.45)}, spec(),
      kT0);
  EXPECT_EQ(d.change, ThrottleChange::cut);
  EXPECT_EQ(d.job_id, 2);
}

TEST(Throttle, CutStopsAtTheFloor) {
  ThrottleSpec s = spec();
  s.min_mb_s = 15;
  auto d = throttle_step(capped(20, 40), {job(1, "alpha", 0.5, 0.4)}, s, kT0);
  EXPECT_EQ(d.change, ThrottleChange::cut);
  EXPECT_DOUBLE_EQ(d.new_cap_bps, 15 * kMB);
  // Already at the floor: no further "cut".
  auto again = throttle_step(capped(15, 40), {job(1, "alpha", 0.5, 0.4)}, s, kT0);
  EXPECT_EQ(again.change, ThrottleChange::none);
}

TEST(Throttle, NoSecondChangeWithinTheInterval) {
  const auto drop = std::vector<JobMfuReading>{job(1, "alpha", 0.5, 0.4)};
  EXPECT_EQ(throttle_step(capped(20, 40, kT0), drop, spec(), kT0 + 9'999).change,
            ThrottleChange::none);
  EXPECT_EQ(throttle_step(capped(20, 40, kT0), drop, spec(), kT0 + 10'000).change,
            ThrottleChange::cut);
  EXPECT_EQ(throttle_step(capped(20, 40, kT0), {}, spec(), kT0 + 5'000).change,
            ThrottleChange::none);
}

TEST(Throttle, WhileMfuHoldsTheCapRisesByATenthOfTheBase) {
  auto d = throttle_step(capped(20, 40), {job(1, "alpha", 0.5, 0.5), job(2, "beta", 0.4, 0.41)},
                         spec(), kT0);
  EXPECT_EQ(d.change, ThrottleChange::raise);
  EXPECT_DOUBLE_EQ(d.new_cap_bps, 24 * kMB);
  EXPECT_EQ(d.why, "MFU holds on alpha and beta: cap 20.0 -> 24.0 MB/s");
}

TEST(Throttle, ConfiguredIncreaseIsUsed) {
  ThrottleSpec s = spec();
  s.increase_mb_s = 2.5;
  auto d = throttle_step(capped(20, 40), {job(1, "alpha", 0.5, 0.5)}, s, kT0);
  EXPECT_DOUBLE_EQ(d.new_cap_bps, 22.5 * kMB);
}

TEST(Throttle, RaisesLandOnTheBaseExactlyAndStopThere) {
  ThrottleState s = capped(20, 40);
  Millis now = kT0;
  int raises = 0;
  for (; raises < 100; ++raises) {
    auto d = throttle_step(s, {job(1, "alpha", 0.5, 0.5)}, spec(), now);
    if (d.change == ThrottleChange::none) break;
    ASSERT_EQ(d.change, ThrottleChange::raise);
    s.cap_bps = d.new_cap_bps;
    s.last_change_ms = now;
    now += 10'000;
  }
  EXPECT_EQ(raises, 5);  // 20 -> 24 -> 28 -> 32 -> 36 -> 40
  EXPECT_EQ(s.cap_bps, 40 * kMB);
}

TEST(Throttle, NoJobToWatchStillRaises) {
  auto d = throttle_step(capped(20, 40), {}, spec(), kT0);
  EXPECT_EQ(d.change, ThrottleChange::raise);
  EXPECT_EQ(d.why, "no job's MFU to watch: cap 20.0 -> 24.0 MB/s");
}

TEST(Throttle, JobsWithoutABaselineAreIgnored) {
  auto d =
      throttle_step(capped(20, 40), {job(1, "alpha", 0, 0), job(2, "beta", -1, 0)}, spec(), kT0);
  EXPECT_EQ(d.change, ThrottleChange::raise);
  EXPECT_EQ(d.why, "no job's MFU to watch: cap 20.0 -> 24.0 MB/s");
}

TEST(Throttle, UncappedTransferIsFirstCutFromItsMeasuredRate) {
  ThrottleState s;  // uncapped, base uncapped
  s.measured_bps = 80 * kMB;
  auto d = throttle_step(s, {job(3, "beta", 0.4, 0.2)}, spec(), kT0);
  EXPECT_EQ(d.change, ThrottleChange::cut);
  EXPECT_DOUBLE_EQ(d.new_cap_bps, 40 * kMB);
  EXPECT_EQ(d.why,
            "job 3's MFU 0.200 is 50.0% below its baseline 0.400 on beta: uncapped "
            "(measured 80.0 MB/s) -> 40.0 MB/s");
}

TEST(Throttle, UncappedTransferWithoutAMeasuredRateIsLeftAlone) {
  ThrottleState s;
  EXPECT_EQ(throttle_step(s, {job(3, "beta", 0.4, 0.2)}, spec(), kT0).change, ThrottleChange::none);
  EXPECT_EQ(throttle_step(s, {}, spec(), kT0).change, ThrottleChange::none);
}

TEST(Throttle, UncappedBaseRaisesByATenthOfTheCapThenLiftsTheCap) {
  ThrottleState s;
  s.cap_bps = 40 * kMB;
  s.measured_bps = 40 * kMB;  // the cap binds
  auto d = throttle_step(s, {job(1, "alpha", 0.5, 0.5)}, spec(), kT0);
  EXPECT_EQ(d.change, ThrottleChange::raise);
  EXPECT_DOUBLE_EQ(d.new_cap_bps, 44 * kMB);

  s.cap_bps = 88 * kMB;
  s.measured_bps = 20 * kMB;  // the link gives no more: 96.8 > 4 x 20, the cap no longer binds
  d = throttle_step(s, {job(1, "alpha", 0.5, 0.5)}, spec(), kT0);
  EXPECT_EQ(d.change, ThrottleChange::raise);
  EXPECT_EQ(d.new_cap_bps, 0);
  EXPECT_EQ(d.why,
            "MFU holds on alpha: cap 88.0 MB/s -> uncapped (over 4x the measured 20.0 MB/s)");
}

TEST(Throttle, CutThenRecoverAsAnEpisode) {
  ThrottleState s = capped(100, 100);
  Millis now = kT0;
  auto step = [&](double recent) {
    auto d = throttle_step(s, {job(1, "alpha", 0.5, recent)}, spec(), now);
    if (d.change != ThrottleChange::none) {
      s.cap_bps = d.new_cap_bps;
      s.last_change_ms = now;
    }
    now += 10'000;
    return d.change;
  };
  EXPECT_EQ(step(0.40), ThrottleChange::cut);  // 50
  EXPECT_EQ(step(0.40), ThrottleChange::cut);  // 25
  EXPECT_EQ(step(0.50), ThrottleChange::raise);
  EXPECT_DOUBLE_EQ(s.cap_bps, 35 * kMB);
}

TEST(RecentMfu, MeanOfTheNewestSamples) {
  MfuWatchState w;
  w.baseline = 0.5;
  w.window = {0.1, 0.2, 0.4, 0.4, 0.4, 0.4, 0.4};
  EXPECT_THAT(recent_mfu(w), Optional(::testing::DoubleEq(0.4)));
  EXPECT_THAT(recent_mfu(w, 7), Optional(::testing::DoubleEq(2.3 / 7)));
  EXPECT_THAT(recent_mfu(w, 100), Optional(::testing::DoubleEq(2.3 / 7)));
}

TEST(RecentMfu, WorkOverTimeOfTheNewestSamples) {
  MfuWatchState w;
  w.baseline = 0.5;
  w.window = {0.9, 0.4, 0.1};
  w.window_s = {1.0, 1.0, 3.0};
  EXPECT_THAT(recent_mfu(w, 2), Optional(::testing::DoubleEq(0.7 / 4)));  // not (0.4 + 0.1) / 2
}

TEST(RecentMfu, NothingWithoutABaselineOrSamples) {
  MfuWatchState w;
  w.window = {0.4};
  EXPECT_EQ(recent_mfu(w), std::nullopt);
  w.baseline = 0.5;
  w.window.clear();
  EXPECT_EQ(recent_mfu(w), std::nullopt);
}

TEST(Throttle, WindowsAreSharedWithTheSpecLibrary) {
  // throttle.h offers the windows of scheduler/spec/time_window.h (tested there in full).
  EXPECT_TRUE(in_windows({"22:00-06:00"}, 23 * 3'600'000LL));
  EXPECT_FALSE(in_windows({"22:00-06:00"}, 12 * 3'600'000LL));
}

}  // namespace
}  // namespace orch
