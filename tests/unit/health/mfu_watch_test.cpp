// MFU over an attempt's life: warm-up, baseline, drop and recovery once per episode; stragglers.
#include "scheduler/health/mfu_watch.h"

#include <gmock/gmock.h>

namespace orch {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Short baseline and window so the cases fit on a line (the defaults are 20 and 20).
MfuWatchPolicy small_policy() {
  MfuWatchPolicy p;
  p.baseline_samples = 10;
  p.window_samples = 5;
  return p;
}

// Feeds samples and returns the changes, one per sample.
std::vector<MfuChange> feed(MfuWatchState& s, const std::vector<double>& samples,
                            const MfuWatchPolicy& p = small_policy()) {
  std::vector<MfuChange> out;
  for (double m : samples) out.push_back(observe_mfu(s, m, p).change);
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

TEST(MfuWatch, WarmupIsIgnoredAndTheBaselineIsTheMedianOfTheNextSamples) {
  MfuWatchState s;
  MfuStep step = observe_mfu(s, 0.01, small_policy());
  EXPECT_EQ(step.change, MfuChange::none);
  EXPECT_EQ(step.baseline, 0);
  s = settled();
  ASSERT_TRUE(s.baseline.has_value());
  EXPECT_DOUBLE_EQ(*s.baseline, 0.40);
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
  MfuStep step = observe_mfu(s, 0.10, small_policy());
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
  EXPECT_EQ(observe_mfu(s, std::nan(""), {}).change, MfuChange::none);
  EXPECT_EQ(observe_mfu(s, -1, {}).change, MfuChange::none);
  EXPECT_EQ(s.samples_seen, 13);
  EXPECT_TRUE(s.window.empty());
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

TEST(MfuBucket, SamplesFallInMinuteBuckets) {
  EXPECT_EQ(mfu_bucket_start(125'000), 120'000);
  EXPECT_EQ(mfu_bucket_start(120'000), 120'000);
  EXPECT_EQ(mfu_bucket_start(125'000, 10'000), 120'000);
}

}  // namespace
}  // namespace orch
