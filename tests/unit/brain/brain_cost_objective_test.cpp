// Goodput per unit of money through the brain (issue 45): with prices in the clusters file and
// MFUs measured by real attempts, a team that ranks by goodput_per_cost is placed on the cluster
// at 0.8x the MFU and half the price, and a team that ranks by goodput (the fleet's objective) on
// the dearer, faster one; the verdicts keep both figures and the price for `job explain`.
#include <gmock/gmock.h>

#include <map>

#include "scheduler/brain/cluster_history.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

constexpr Millis kHourMs = 3600LL * 1000;

ClusterSpec priced(ClusterSpec c, double per_gpu_hour) {
  c.price.configured = true;
  c.price.per_gpu_hour = per_gpu_hour;
  return c;
}

class BrainCostObjective : public BrainFixture {
 protected:
  void SetUp() override {
    // 1 TFLOP/s per GPU: 1000 tokens x 8e8 FLOP a step on 2 GPUs is MFU 0.40 at 1 s a step.
    SchedulingSpec scheduling;
    scheduling.teams["speed"] = TeamQuota{};
    scheduling.teams["frugal"] = TeamQuota{};
    scheduling.teams["frugal"].objective = "goodput_per_cost";
    start({priced(make_cluster("dear").nodes(1).gpus_per_node(2).peak_tflops(1.0), 4.0),
           priced(make_cluster("cheap").nodes(1).gpus_per_node(2).peak_tflops(1.0), 2.0)},
          scheduling);
    measure("dear", 0.8);   // MFU 0.50
    measure("cheap", 1.0);  // MFU 0.40: 0.8x dear's, at 0.5x the price
    clock.advance_ms(kHistoryRefreshMs);
  }

  // A day of steps of `step_s` on the cluster, then the job ends: its MFU is the cluster's.
  void measure(const std::string& cluster, double step_s) {
    JobId id =
        submit(make_job().gpus(2).flops_per_token(8e8).on({cluster}).team("speed").hang_after_s(0));
    site_launches_all(cluster);
    AttemptRow a = last_attempt(id);
    ASSERT_EQ(a.cluster, cluster);
    for (int hour = 0; hour < 24; ++hour) {
      clock.advance_ms(kHourMs);
      train(a, hour * 10 + 1, hour * 10 + 10, 0, 1000, step_s);
    }
    exits(a, 0);
  }

  // Where a job of the team is placed, and the job's verdicts by cluster; the job then ends.
  std::string placed(const std::string& team, std::map<std::string, PlacementVerdictRow>& by) {
    JobId id = submit(make_job().gpus(2).flops_per_token(8e8).team(team));
    const AttemptRow a = last_attempt(id);
    by.clear();
    for (auto& v : store->verdicts_of(id).value()) by[v.cluster] = std::move(v);
    site_launches_all(a.cluster);
    exits(last_attempt(id), 0);
    return a.cluster;
  }
};

TEST_F(BrainCostObjective, TheCheaperClusterWinsPerUnitOfMoneyAndLosesOnGoodput) {
  std::map<std::string, PlacementVerdictRow> verdicts;
  EXPECT_EQ(placed("speed", verdicts), "dear");
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_FALSE(verdicts["dear"].goodput.per_cost);
  EXPECT_NEAR(verdicts["dear"].goodput.mfu, 0.5, 0.01);
  EXPECT_NEAR(verdicts["cheap"].goodput.mfu, 0.4, 0.01);

  EXPECT_EQ(placed("frugal", verdicts), "cheap");
  ASSERT_EQ(verdicts.size(), 2u);
  const ScoreNote& dear = verdicts["dear"].goodput;
  const ScoreNote& cheap = verdicts["cheap"].goodput;
  EXPECT_TRUE(cheap.per_cost);
  EXPECT_TRUE(verdicts["cheap"].chosen);
  // Both figures and the price, per cluster: cheap does 0.8x the FLOP/s and buys 1.6x the FLOP
  // per unit of money.
  EXPECT_EQ(cheap.priced, ScoreNote::Priced::own);
  EXPECT_DOUBLE_EQ(cheap.price_per_gpu_hour, 2.0);
  EXPECT_DOUBLE_EQ(dear.price_per_gpu_hour, 4.0);
  EXPECT_NEAR(cheap.flops / dear.flops, 0.8, 0.01);
  EXPECT_NEAR(cheap.flop_per_money / dear.flop_per_money, 1.6, 0.02);
  EXPECT_THAT(verdicts["cheap"].reason, HasSubstr(", 2.00 USD/GPU-h, "));
}

}  // namespace
}  // namespace orch::testing
