// The checkpoint planner (issue 45): its interval is the exact renewal optimum with Young's
// beside it, each point around it carries both formulas' ETTR, and it says how much of its MTBF
// is the prior's.
#include "scheduler/health/checkpoint_plan.h"

#include <gtest/gtest.h>

#include "scheduler/health/renewal.h"

namespace orch {
namespace {

GoodputEstimate estimate(double cost_s, double restart_s, double job_mtbf_s) {
  GoodputEstimate e;
  e.checkpoint_cost_s = cost_s;
  e.restart_s = restart_s;
  e.job_mtbf_s = job_mtbf_s;
  return e;
}

TEST(CheckpointPlan, AdvisesTheRenewalOptimumWithYoungsAndTheFirstOrderBeside) {
  const CheckpointPlan p = plan_checkpoints(estimate(60, 300, 1800), ClusterHistory{});
  EXPECT_DOUBLE_EQ(p.interval_s, renewal_interval_s(60, 1800));
  EXPECT_DOUBLE_EQ(p.young_interval_s, young_interval_s(60, 1800));
  EXPECT_LT(p.interval_s, p.young_interval_s);
  EXPECT_DOUBLE_EQ(p.ettr, renewal_ettr(60, p.interval_s, 300, 1800));
  EXPECT_DOUBLE_EQ(p.ettr_first_order, expected_ettr(60, p.interval_s, 300, 1800));
  ASSERT_EQ(p.around.size(), 5u);
  EXPECT_DOUBLE_EQ(p.around[2].interval_s, p.interval_s);
  for (const PlanPoint& at : p.around) {
    EXPECT_LE(at.ettr, p.ettr + 1e-12);       // the best is the best
    EXPECT_GE(at.ettr, at.ettr_first_order);  // the first order is the pessimist
  }
  // At a quarter of the interval, the first order says far less than the job gets.
  EXPECT_GT(p.around[0].ettr - p.around[0].ettr_first_order, 0.05);
}

TEST(CheckpointPlan, SaysWhenItsMtbfIsMostlyPriorAndHowManyHoursItStandsOn) {
  GoodputPriors priors;  // 500 node-hours of prior weight
  ClusterHistory none;
  EXPECT_EQ(plan_checkpoints(estimate(60, 300, 3600), none, priors).mtbf_basis, "prior");
  ClusterHistory short_run;  // 13 s on 4 nodes, 3 failures: 40 h of MTBF is mostly prior
  short_run.node_hours = 4 * 13 / 3600.0;
  short_run.node_failures = 3;
  const CheckpointPlan p = plan_checkpoints(estimate(60, 300, 3600), short_run, priors);
  EXPECT_EQ(p.mtbf_basis, "mostly prior");
  EXPECT_DOUBLE_EQ(p.evidence_node_hours, 4 * 13 / 3600.0);
  EXPECT_EQ(p.node_failures, 3);
  EXPECT_DOUBLE_EQ(p.prior_node_hours, 500);
  EXPECT_GT(p.prior_share, 0.99);
  ClusterHistory long_run;
  long_run.node_hours = 5000;
  const CheckpointPlan q = plan_checkpoints(estimate(60, 300, 3600), long_run, priors);
  EXPECT_EQ(q.mtbf_basis, "measured");
  EXPECT_NEAR(q.prior_share, 500.0 / 5500, 1e-12);
}

TEST(CheckpointPlan, WithoutACostOrAnMtbfThereIsNoInterval) {
  const CheckpointPlan p = plan_checkpoints(estimate(0, 300, 3600), ClusterHistory{});
  EXPECT_EQ(p.interval_s, 0);
  EXPECT_TRUE(p.around.empty());
}

}  // namespace
}  // namespace orch
