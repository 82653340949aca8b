// Expected goodput: Young's interval and the first-order ETTR on known values, and the MTBF prior
// pulled towards a cluster's history.
#include "scheduler/health/goodput.h"

#include <cmath>

#include <gmock/gmock.h>

namespace orch {
namespace {

TEST(Goodput, YoungsIntervalIsTheSquareRootOfTwiceCostTimesMtbf) {
  EXPECT_DOUBLE_EQ(young_interval_s(50, 10'000), 1000);
  // Llama 3 at 16k GPUs: M ~ 3.1 h; with a 60 s checkpoint, tau* ~ 19.3 minutes.
  EXPECT_NEAR(young_interval_s(60, 3.1 * 3600), 1157.2, 0.1);
  EXPECT_EQ(young_interval_s(0, 10'000), 0);
  EXPECT_EQ(young_interval_s(50, 0), 0);
}

TEST(Goodput, EttrLosesCheckpointTimeAndHalfAnIntervalPlusRestartPerFailure) {
  // 1 - 50/1000 - (500 + 300)/10000 = 1 - 0.05 - 0.08.
  EXPECT_DOUBLE_EQ(expected_ettr(50, 1000, 300, 10'000), 0.87);
  // Free checkpoints taken continuously: only the restart is lost.
  EXPECT_DOUBLE_EQ(expected_ettr(0, 0, 100, 1000), 0.9);
  // Clamped to [0, 1].
  EXPECT_EQ(expected_ettr(600, 700, 3600, 1000), 0);
  EXPECT_EQ(expected_ettr(50, 1000, 300, 0), 0);
  EXPECT_EQ(expected_ettr(50, 0, 300, 10'000), 0);
}

TEST(Goodput, ANewClusterGetsThePriors) {
  GoodputPriors priors;
  GoodputEstimate e = estimate_goodput(4, 32, 989e12, {}, priors);
  EXPECT_DOUBLE_EQ(e.node_mtbf_s, 2000 * 3600.0);  // 500 h of evidence with 0.25 failures
  EXPECT_DOUBLE_EQ(e.job_mtbf_s, 500 * 3600.0);    // four nodes fail four times as often
  EXPECT_DOUBLE_EQ(e.expected_mfu, 0.35);
  EXPECT_DOUBLE_EQ(e.checkpoint_cost_s, 60);
  EXPECT_DOUBLE_EQ(e.restart_s, 300);
  EXPECT_DOUBLE_EQ(e.interval_s, std::sqrt(2 * 60 * 500 * 3600.0));  // ~ 14697 s
  EXPECT_DOUBLE_EQ(e.ettr, expected_ettr(60, e.interval_s, 300, 500 * 3600.0));
  EXPECT_NEAR(e.ettr, 0.99167, 1e-5);
  EXPECT_DOUBLE_EQ(e.flops, 32 * 989e12 * 0.35 * e.ettr);
  EXPECT_EQ(e.staging_s, 0);
}

TEST(Goodput, HistoryPullsTheMtbfFromThePriorTowardsWhatWasSeen) {
  ClusterHistory h;
  h.node_hours = 1500;
  h.node_failures = 7;
  // (500 + 1500) node-hours / (500 / 2000 + 7) failures = 275.86 h.
  GoodputEstimate e = estimate_goodput(1, 8, 989e12, h);
  EXPECT_NEAR(e.node_mtbf_s / 3600, 2000 / 7.25, 1e-9);
  // With a lot of evidence the measured MTBF (1000 h) dominates.
  h.node_hours = 1'000'000;
  h.node_failures = 1000;
  EXPECT_NEAR(estimate_goodput(1, 8, 989e12, h).node_mtbf_s / 3600, 1000, 1);
  // Hours without failures raise it above the prior.
  h.node_hours = 1500;
  h.node_failures = 0;
  EXPECT_NEAR(estimate_goodput(1, 8, 989e12, h).node_mtbf_s / 3600, 8000, 1e-9);
}

TEST(Goodput, MeasuredMfuCheckpointCostAndRestartReplaceThePriors) {
  ClusterHistory h;
  h.mfu = 0.42;
  h.checkpoint_cost_s = 20;
  h.restart_s = 90;
  GoodputEstimate e = estimate_goodput(2, 16, 312e12, h);
  EXPECT_DOUBLE_EQ(e.expected_mfu, 0.42);
  EXPECT_DOUBLE_EQ(e.checkpoint_cost_s, 20);
  EXPECT_DOUBLE_EQ(e.restart_s, 90);
  EXPECT_DOUBLE_EQ(e.job_mtbf_s, 1000 * 3600.0);
  EXPECT_DOUBLE_EQ(e.interval_s, young_interval_s(20, 1000 * 3600.0));
  EXPECT_DOUBLE_EQ(e.flops, 16 * 312e12 * 0.42 * e.ettr);
}

// Issue 42: advice is labelled a prior until the save time and the node-hours are measured.
TEST(Goodput, AdviceIsAPriorUntilTheSaveTimeAndNodeHoursAreMeasured) {
  ClusterHistory h;
  EXPECT_STREQ(advice_basis(h), "prior");
  h.checkpoint_cost_s = 20;
  EXPECT_STREQ(advice_basis(h), "prior") << "the MTBF is still the prior's";
  h.node_hours = 12;
  EXPECT_STREQ(advice_basis(h), "measured");
  h.checkpoint_cost_s.reset();
  EXPECT_STREQ(advice_basis(h), "prior");
}

TEST(Goodput, WorseMtbfMeansLowerEttr) {
  ClusterHistory flaky;
  flaky.node_hours = 1000;
  flaky.node_failures = 100;
  EXPECT_LT(estimate_goodput(2, 16, 989e12, flaky).ettr, estimate_goodput(2, 16, 989e12, {}).ettr);
}

TEST(Goodput, AnMfuMeasuredBrieflyOrLongAgoIsUncertain) {
  constexpr std::int64_t kDay = 86'400'000;
  ClusterHistory h;
  EXPECT_DOUBLE_EQ(mfu_spread(h, 0), 0.10);  // never measured: the prior's spread
  h.mfu = 0.4;
  h.mfu_measured_ms = 10 * kDay;
  h.mfu_hours = 3;  // half the prior's after three hours
  EXPECT_DOUBLE_EQ(mfu_spread(h, 10 * kDay), 0.05);
  h.mfu_hours = 96;  // about a tenth after four days
  EXPECT_NEAR(mfu_spread(h, 10 * kDay), 0.0102, 1e-4);
  // Twenty days later, the drift (0.05) adds to it; eighty days, the prior's at most.
  EXPECT_NEAR(mfu_spread(h, 30 * kDay), std::sqrt(0.0102 * 0.0102 + 0.05 * 0.05), 1e-4);
  EXPECT_DOUBLE_EQ(mfu_spread(h, 90 * kDay), 0.10);
  // A history that says neither when nor how long (a hand-made one) is taken as exact.
  ClusterHistory exact;
  exact.mfu = 0.4;
  EXPECT_DOUBLE_EQ(mfu_spread(exact, 10 * kDay), 0);
}

}  // namespace
}  // namespace orch
