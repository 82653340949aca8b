// MFU over an attempt's life: warm-up, baseline, drop and recovery once per episode; stragglers.
#include "scheduler/health/mfu_watch.h"

#include <gmock/gmock.h>

namespace orch {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Short baseline and window so the cases fit on a line (the defaults are 20 and 20), and no
// hold in time: the hold has tests of its own below.
MfuWatchPolicy small_policy() {
  MfuWatchPolicy p;
  p.baseline_samples = 10;
  p.window_samples = 5;
  p.hold_ms = 0;
  return p;
}

// The fake clock: each sample is taken in one second after the previous one.
Millis g_now = 0;

// Feeds samples and returns the changes, one per sample.
std::vector<MfuChange> feed(MfuWatchState& s, const std::vector<double>& samples,
                            const MfuWatchPolicy& p = small_policy()) {
  std::vector<MfuChange> out;
  for (double m : samples) out.push_back(observe_mfu(s, m, g_now += 1000, p).change);
  return out;
}

// Feeds samples all taken in at one instant (one observation's batch of progress lines).
std::vector<MfuChange> feed_at(Millis at_ms, MfuWatchState& s, const std::vector<double>& samples,
                               const MfuWatchPolicy& p) {
  std::vector<MfuChange> out;
  for (double m : samples) out.push_back(observe_mfu(s, m, at_ms, p).change);
  return out;
}

std::vector<double> repeat(double v, int n) {
  return std::vector<double>(static_cast<std::size_t>(n), v);
}

// Warm-up (3 samples) then a baseline of 10 samples at 0.40.
MfuWatchState settled() {
  MfuWatchState s;
  feed(s, {0.01, 0.02, 0.03});
  feed(s, {0.38, 0.40, 0.42, 0.40, 0.41, 0.39, 0.40, 0.40, 0.44, 0.36});
  return s;
}

TEST(MfuWatch, WarmupIsIgnoredAndTheBaselineIsTheWorkOverTimeOfTheNextSamples) {
  MfuWatchState s;
  MfuStep step = observe_mfu(s, 0.01, g_now += 1000, small_policy());
  EXPECT_EQ(step.change, MfuChange::none);
  EXPECT_EQ(step.baseline, 0);
  s = settled();
  ASSERT_TRUE(s.baseline.has_value());
  EXPECT_NEAR(*s.baseline, 0.40, 1e-12);  // steps of 1 s each: their mean
  EXPECT_EQ(s.samples_seen, 13);
  EXPECT_TRUE(s.baseline_samples.empty());
}

TEST(MfuWatch, TheWarmupDoesNotLookLikeADrop) {
  MfuWatchState s;
  // Slow first steps, then a steady run: never a drop.
  auto changes = feed(s, {0.01, 0.01, 0.01});
  auto rest = feed(s, repeat(0.40, 30));
  changes.insert(changes.end(), rest.begin(), rest.end());
  for (MfuChange c : changes) EXPECT_EQ(c, MfuChange::none);
  EXPECT_FALSE(s.dropped);
}

TEST(MfuWatch, ADropOfMoreThanTenPercentIsRaisedOnceThenRecovers) {
  MfuWatchState s = settled();
  EXPECT_THAT(feed(s, repeat(0.40, 5)),
              ElementsAre(MfuChange::none, MfuChange::none, MfuChange::none, MfuChange::none,
                          MfuChange::none));
  // Window [0.40 x4, 0.10]: mean 0.34 < 0.36.
  MfuStep step = observe_mfu(s, 0.10, g_now += 1000, small_policy());
  EXPECT_EQ(step.change, MfuChange::dropped);
  EXPECT_DOUBLE_EQ(step.baseline, 0.40);
  EXPECT_NEAR(step.window_mean, 0.34, 1e-12);
  // Still low: no second report.
  EXPECT_THAT(feed(s, repeat(0.10, 6)),
              ElementsAre(MfuChange::none, MfuChange::none, MfuChange::none, MfuChange::none,
                          MfuChange::none, MfuChange::none));
  EXPECT_TRUE(s.dropped);
  // Back up: the window mean must reach 0.38 (half the margin) before it counts as recovered.
  // Window after each 0.40: mean 0.16, 0.22, 0.28, 0.34, 0.40.
  EXPECT_THAT(feed(s, repeat(0.40, 5)),
              ElementsAre(MfuChange::none, MfuChange::none, MfuChange::none, MfuChange::none,
                          MfuChange::recovered));
  EXPECT_FALSE(s.dropped);
  // A second episode is reported again, once a full window of new samples shows it.
  EXPECT_THAT(feed(s, repeat(0.10, 5)),
              ElementsAre(MfuChange::none, MfuChange::none, MfuChange::none, MfuChange::none,
                          MfuChange::dropped));
}

TEST(MfuWatch, ASmallDipIsNotADrop) {
  MfuWatchState s = settled();
  // 8% below the baseline.
  auto changes = feed(s, repeat(0.368, 10));
  for (MfuChange c : changes) EXPECT_EQ(c, MfuChange::none);
}

TEST(MfuWatch, SamplesThatAreNotNumbersAreSkipped) {
  MfuWatchState s = settled();
  EXPECT_EQ(observe_mfu(s, std::nan(""), g_now += 1000, {}).change, MfuChange::none);
  EXPECT_EQ(observe_mfu(s, -1, g_now += 1000, {}).change, MfuChange::none);
  EXPECT_EQ(s.samples_seen, 13);
  EXPECT_TRUE(s.window.empty());
}

// Work over time (mfu_watch.h): each step weighs its step time.

// The case: one slowed node of a gang stretches 11 steps of 27 to 4 s where the others
// take 1 s at MFU 0.40. The run does 27 steps in 60 s where it did them in 27 s: 45% of its
// speed, MFU 0.18. The mean of the per-step MFUs would say 0.278 (69%), and no drop at 40%.
TEST(MfuWatchOverTime, AWindowOfUnevenStepsIsItsWorkOverItsTime) {
  MfuWatchPolicy p = small_policy();
  p.window_samples = 27;
  p.drop_fraction = 0.40;
  MfuWatchState s = settled();
  MfuStep step;
  for (int i = 0; i < 27; ++i) {
    const bool slow = i % 5 == 1 || i % 5 == 3 || i == 26;  // 11 of 27
    step = observe_mfu(s, slow ? 0.10 : 0.40, g_now += 1000, p, slow ? 4.0 : 1.0);
  }
  EXPECT_NEAR(step.window_mean, 0.40 * 27 / 60, 1e-12);  // 0.18: 45% of 0.40
  EXPECT_EQ(step.change, MfuChange::dropped);
}

// A steady run with a periodic slow step (an evaluation every fifth step): its baseline holds
// the slow steps in their share of the time, as its windows do, so it never drops. A baseline of
// the typical step (0.40) would put it 37% below at once.
TEST(MfuWatchOverTime, APeriodicSlowStepIsInTheBaselineAsInEveryWindow) {
  MfuWatchPolicy p = small_policy();
  p.window_samples = 10;
  MfuWatchState s;
  for (int i = 0; i < 3 + 10 + 40; ++i) {
    const bool slow = i % 5 == 4;
    auto step = observe_mfu(s, slow ? 0.10 : 0.40, g_now += 1000, p, slow ? 4.0 : 1.0);
    EXPECT_EQ(step.change, MfuChange::none) << "step " << i;
  }
  ASSERT_TRUE(s.baseline.has_value());
  EXPECT_NEAR(*s.baseline, 0.25, 1e-12);  // (8 x 0.40 x 1 s + 2 x 0.10 x 4 s) / 16 s
}

TEST(MfuWatchOverTime, TheWeightsAreKeptInTheStoredStateAndOldStateWeighsOneSecond) {
  MfuWatchState s = settled();
  observe_mfu(s, 0.40, g_now += 1000, small_policy(), 2.5);
  std::vector<std::string> suspects;
  MfuWatchState back = mfu_watch_from_json(mfu_watch_to_json(s, {}), suspects);
  EXPECT_EQ(back.window_s, std::vector<double>{2.5});
  nlohmann::json old = mfu_watch_to_json(s, {});
  old.erase("window_s");
  EXPECT_EQ(mfu_watch_from_json(old, suspects).window_s, std::vector<double>{1.0});
  EXPECT_THAT(mfu_over_time({0.4, 0.1}, {1.0}), ::testing::Optional(0.25));
  EXPECT_EQ(mfu_over_time({}, {}), std::nullopt);
}

TEST(MfuWatchOverTime, AStepWithoutATimeIsSkipped) {
  MfuWatchState s = settled();
  EXPECT_EQ(observe_mfu(s, 0.40, g_now += 1000, {}, 0.0).change, MfuChange::none);
  EXPECT_EQ(s.samples_seen, 13);
}

// The demo's flapping: a drop and a recovery within a second, when one observation brought in
// a burst of samples. With the hold, no two changes are closer than hold_ms.
MfuWatchPolicy held_policy() {
  MfuWatchPolicy p = small_policy();
  p.hold_ms = 10'000;
  return p;
}

using ::testing::Each;
using ::testing::Eq;

TEST(MfuWatchHold, ABurstCannotDropAndRecoverWithinTheHold) {
  const MfuWatchPolicy p = held_policy();
  MfuWatchState s = settled();
  const Millis t = 100'000;
  // The first drop of an attempt is raised as soon as a full window shows it.
  EXPECT_THAT(feed_at(t, s, repeat(0.10, 5), p),
              ElementsAre(MfuChange::none, MfuChange::none, MfuChange::none, MfuChange::none,
                          MfuChange::dropped));
  // Back at the baseline in the same burst, and for the next 9.9 s: not yet recovered.
  EXPECT_THAT(feed_at(t, s, repeat(0.40, 10), p), Each(Eq(MfuChange::none)));
  EXPECT_THAT(feed_at(t + 5'000, s, repeat(0.40, 5), p), Each(Eq(MfuChange::none)));
  EXPECT_THAT(feed_at(t + 9'999, s, repeat(0.40, 5), p), Each(Eq(MfuChange::none)));
  EXPECT_TRUE(s.dropped);
  // Back for the whole hold (it started with the first full window at t): recovered.
  EXPECT_THAT(feed_at(t + 10'000, s, {0.40}, p), ElementsAre(MfuChange::recovered));
  EXPECT_FALSE(s.dropped);
}

TEST(MfuWatchHold, ARecoveryThatFallsBackStartsItsHoldAgain) {
  const MfuWatchPolicy p = held_policy();
  MfuWatchState s = settled();
  feed_at(0, s, repeat(0.10, 5), p);
  ASSERT_TRUE(s.dropped);
  EXPECT_THAT(feed_at(1'000, s, repeat(0.40, 5), p), Each(Eq(MfuChange::none)));  // hold from 1 s
  EXPECT_THAT(feed_at(6'000, s, repeat(0.10, 5), p), Each(Eq(MfuChange::none)));  // broken
  EXPECT_THAT(feed_at(8'000, s, repeat(0.40, 5), p), Each(Eq(MfuChange::none)));  // from 8 s
  EXPECT_THAT(feed_at(17'999, s, {0.40}, p), ElementsAre(MfuChange::none));
  EXPECT_THAT(feed_at(18'000, s, {0.40}, p), ElementsAre(MfuChange::recovered));
}

TEST(MfuWatchHold, ADropSoonAfterARecoveryWaitsForTheHold) {
  const MfuWatchPolicy p = held_policy();
  MfuWatchState s = settled();
  feed_at(0, s, repeat(0.10, 5), p);
  feed_at(1'000, s, repeat(0.40, 5), p);
  ASSERT_THAT(feed_at(11'000, s, {0.40}, p), ElementsAre(MfuChange::recovered));
  // Low again a second later: no drop until 10 s after the recovery, if it is still low then.
  EXPECT_THAT(feed_at(12'000, s, repeat(0.10, 5), p), Each(Eq(MfuChange::none)));
  EXPECT_THAT(feed_at(20'999, s, {0.10}, p), ElementsAre(MfuChange::none));
  EXPECT_THAT(feed_at(21'000, s, {0.10}, p), ElementsAre(MfuChange::dropped));
}

TEST(MfuWatchHold, TheHoldIsKeptInTheStoredState) {
  const MfuWatchPolicy p = held_policy();
  MfuWatchState s = settled();
  feed_at(0, s, repeat(0.10, 5), p);
  feed_at(1'000, s, repeat(0.40, 5), p);
  std::vector<std::string> suspects;
  MfuWatchState back = mfu_watch_from_json(mfu_watch_to_json(s, {}), suspects);
  EXPECT_EQ(back.changed_at_ms, Millis{0});
  EXPECT_EQ(back.recovering_ms, Millis{1'000});
  EXPECT_THAT(feed_at(10'999, back, {0.40}, p), ElementsAre(MfuChange::none));
  EXPECT_THAT(feed_at(11'000, back, {0.40}, p), ElementsAre(MfuChange::recovered));
}

TEST(MfuWatchHold, TheDefaultHoldIsTenSeconds) {
  EXPECT_EQ(MfuWatchPolicy{}.hold_ms, 10'000);
}

TEST(Stragglers, RanksSlowerThanTheMedianNameTheirNodesSlowestFirst) {
  std::vector<RankTime> ranks = {{0, "n1", 1.0}, {1, "n1", 1.0},  {2, "n2", 1.1}, {3, "n2", 1.0},
                                 {4, "n3", 1.3}, {5, "n3", 1.25}, {6, "n4", 1.9}, {7, "n5", 1.0}};
  // Median 1.05; limit 1.26. n4 (1.9) and n3 (by its 1.3 rank) are out; n2 at 1.1 is not.
  EXPECT_THAT(find_stragglers(ranks, {}), ElementsAre("n4", "n3"));
}

TEST(Stragglers, FewerThanThreeRanksOrAnEvenRunGiveNone) {
  EXPECT_THAT(find_stragglers({{0, "a", 1}, {1, "b", 5}}, {}), IsEmpty());
  EXPECT_THAT(find_stragglers({{0, "a", 1}, {1, "b", 1}, {2, "c", 1.1}}, {}), IsEmpty());
}

TEST(Stragglers, ANodeIsConfirmedByEnoughReportsOverEnoughTimeOnce) {
  const MfuWatchPolicy p;  // 5 reports over at least 30 s
  MfuWatchState s;
  // Five reports within a second: a burst is not a confirmation.
  for (int i = 0; i < 5; ++i) EXPECT_THAT(tally_stragglers(s, {"n3"}, i * 100, p), IsEmpty());
  EXPECT_THAT(tally_stragglers(s, {"n3", "n4"}, 29'999, p), IsEmpty());
  EXPECT_THAT(tally_stragglers(s, {"n3"}, 30'000, p), ElementsAre("n3"));
  // Once per attempt, and the tally survives the attempt row.
  std::vector<std::string> suspects;
  MfuWatchState back = mfu_watch_from_json(mfu_watch_to_json(s, {}), suspects);
  EXPECT_EQ(back.stragglers["n3"].reports, 7);
  EXPECT_TRUE(back.stragglers["n3"].confirmed);
  EXPECT_EQ(back.stragglers["n4"].first_ms, 29'999);
  EXPECT_THAT(tally_stragglers(back, {"n3"}, 90'000, p), IsEmpty());
}

TEST(MfuBucket, SamplesFallInMinuteBuckets) {
  EXPECT_EQ(mfu_bucket_start(125'000), 120'000);
  EXPECT_EQ(mfu_bucket_start(120'000), 120'000);
  EXPECT_EQ(mfu_bucket_start(125'000, 10'000), 120'000);
}

}  // namespace
}  // namespace orch
