// Moving for what it is worth (scheduler/placement/move_worth.h): a resumed job moves when the
// useful work it can expect over the rest of its run elsewhere, net of the move, is more than by
// staying; an unmeasured or long-unmeasured cluster is worth a trial only while the rest of the
// run could repay it.
#include "scheduler/placement/move_worth.h"

#include <gmock/gmock.h>

#include <cmath>

namespace orch::testing {
namespace {

using ::testing::DoubleNear;

constexpr double kHour = 3600;
constexpr double kDay = 86400;

ClusterOutlook known(double mfu, double move_in_s = 0) {
  return ClusterOutlook{1.0, mfu, 0.0, 12 * kHour, move_in_s};
}
ClusterOutlook unmeasured(double mfu = 0.35, double sd = 0.10, double move_in_s = 0) {
  return ClusterOutlook{1.0, mfu, sd, 12 * kHour, move_in_s, true, false};
}
ClusterOutlook stale(double mfu, double sd, double move_in_s) {
  return ClusterOutlook{1.0, mfu, sd, 12 * kHour, move_in_s, true, true};
}

// Whether a job that ran on clusters[0] is better off on clusters[1] over the horizon.
bool moves(const std::vector<ClusterOutlook>& clusters, double horizon_s) {
  const std::vector<double> w = expected_work(clusters, horizon_s, 0);
  return w[1] > w[0];
}

TEST(MoveWorth, ExpectedMaxIsTheLargerWhenCertainAndMoreWhenNot) {
  EXPECT_DOUBLE_EQ(expected_max(0.3, 0, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(expected_max(0.6, 0, 0.5), 0.6);
  // Even odds: the fallback plus sd x the normal density at 0.
  EXPECT_THAT(expected_max(0.5, 0.1, 0.5), DoubleNear(0.5 + 0.1 / std::sqrt(2 * M_PI), 1e-12));
  // Far below the fallback: worth almost nothing more.
  EXPECT_THAT(expected_max(0.1, 0.1, 0.5), DoubleNear(0.5, 1e-4));
}

TEST(MoveWorth, ABetterMeasuredClusterIsWorthItOnlyWhenTheRestOfTheRunRepaysTheCopy) {
  // 10% more MFU, an hour to copy the checkpoint there.
  const std::vector<ClusterOutlook> c = {known(0.30), known(0.33, kHour)};
  EXPECT_TRUE(moves(c, kDay));                                     // 0.33 x 23 h > 0.30 x 24 h
  EXPECT_FALSE(moves(c, 5 * kHour));                               // 0.33 x 4 h < 0.30 x 5 h
  EXPECT_FALSE(moves({known(0.30), known(0.30, 60)}, 30 * kDay));  // an equal one never is
}

TEST(MoveWorth, AnUnmeasuredClusterIsTriedFromAPoorOneButNotFromTheBest) {
  EXPECT_TRUE(moves({known(0.30), unmeasured()}, 30 * kDay));
  EXPECT_TRUE(moves({known(0.42), unmeasured()}, 30 * kDay));   // the chance it is far better
  EXPECT_FALSE(moves({known(0.55), unmeasured()}, 30 * kDay));  // too slim to pay for the trial
}

TEST(MoveWorth, ExploringStopsAsTheRunNearsItsEnd) {
  const std::vector<ClusterOutlook> c = {known(0.38), unmeasured(0.35, 0.10, 600)};
  EXPECT_TRUE(moves(c, 30 * kDay));
  EXPECT_FALSE(moves(c, kDay));
}

TEST(MoveWorth, AStaleMeasurementCloseToTheBestIsWorthMeasuringAgain) {
  // Measured at 0.50 against 0.55 where the job runs: fresh, not worth a trial; with the spread
  // of twenty days' drift (0.05), worth one over a month.
  EXPECT_FALSE(moves({known(0.55), known(0.50, 600)}, 30 * kDay));
  EXPECT_TRUE(moves({known(0.55), stale(0.50, 0.05, 600)}, 30 * kDay));
  // Far below the best, even a stale measurement is not.
  EXPECT_FALSE(moves({known(0.55), stale(0.30, 0.05, 600)}, 30 * kDay));
}

TEST(MoveWorth, AnInfeasibleClusterIsNeitherScoredNorAFallback) {
  std::vector<ClusterOutlook> c = {known(0.55), unmeasured()};
  c[0].feasible = false;
  const std::vector<double> w = expected_work(c, 30 * kDay, 0);
  EXPECT_EQ(w[0], 0);
  // With nothing to come back to, the trial is worth the prior's mean over the whole horizon
  // (and a hair for the normal's tail below zero).
  EXPECT_THAT(w[1], DoubleNear(0.35 * 30 * kDay, 1e-4 * w[1]));
}

TEST(MoveWorth, WithNothingMeasuredClustersCompareByTheirMeans) {
  // A lemon's short MTBF gives it many chances to move on, but with nothing measured there is
  // nothing to move on to: its trial is worth its mean, less than the steady cluster's.
  ClusterOutlook lemon = unmeasured();
  lemon.flops_per_mfu = 0.9;
  lemon.trial_s = kHour;
  ClusterOutlook steady = unmeasured();
  steady.trial_s = 40 * kDay;
  const std::vector<double> w = expected_work({steady, lemon}, 30 * kDay, std::nullopt);
  EXPECT_GT(w[0], w[1]);
}

TEST(MoveWorth, ACopyLongerThanTheRunStillLeavesClustersApart) {
  // Data staged nowhere, two hours to copy, a day of run: the faster one still scores higher.
  const std::vector<double> w =
      expected_work({known(0.30, 2 * kHour), known(0.40, 2 * kHour)}, kDay, std::nullopt);
  EXPECT_GT(w[0], 0);
  EXPECT_GT(w[1], w[0]);
  const std::vector<double> far =
      expected_work({known(0.30, 40 * kDay), known(0.40, 40 * kDay)}, kDay, std::nullopt);
  EXPECT_GT(far[1], far[0]);
  EXPECT_GT(far[0], 0);
}

TEST(MoveWorth, ACopyThatOutlastsTheTrialIsChargedInFull) {
  // An unmeasured cluster an MTBF of 12 h away, 20 h to copy there: no trial to learn from, the
  // copy costs its whole length (as a known cluster at the prior's mean).
  const std::vector<double> w =
      expected_work({known(0.30), unmeasured(0.35, 0.10, 20 * kHour)}, 30 * kDay, 0);
  EXPECT_DOUBLE_EQ(w[1], 0.35 * after_move(30 * kDay, 20 * kHour));
}

TEST(MoveWorth, TheHorizonIsWhatIsLeftOfTheRun) {
  EXPECT_EQ(remaining_horizon_s(3600), kDay);                       // at least a day
  EXPECT_EQ(remaining_horizon_s(10 * kDay), 10 * kDay);             // as long again as it has run
  EXPECT_EQ(remaining_horizon_s(10 * kDay, 30 * kDay), 20 * kDay);  // what its spec says is left
  EXPECT_EQ(remaining_horizon_s(29.5 * kDay, 30 * kDay), kDay);     // at least a day
  EXPECT_EQ(remaining_horizon_s(40 * kDay, 30 * kDay), kDay);       // overrun: a day
}

}  // namespace
}  // namespace orch::testing
