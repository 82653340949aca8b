// Goodput per unit of money as the placement objective (issue 45, cost_objective.h): a cluster at
// 0.8x the MFU and half the price buys 1.6x the work per unit of money, so it wins when the team
// or the fleet ranks by goodput_per_cost and loses when it ranks by goodput.
#include "scheduler/placement/cost_objective.h"

#include <gmock/gmock.h>

#include "scheduler/placement/goodput_score.h"
#include "scheduler/placement/pipeline.h"
#include "tests/harness/builders.h"

namespace orch::testing {
namespace {

using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;
using ::testing::StartsWith;

ClusterSpec priced(ClusterSpec c, double per_gpu_hour) {
  c.price.configured = true;
  c.price.per_gpu_hour = per_gpu_hour;
  return c;
}

// Measured over a long history: the MFU is known, no trial is worth anything.
ClusterView measured(const ClusterSpec& spec, double mfu, double price) {
  ClusterView v{&spec};
  v.history.mfu = mfu;
  v.history.mfu_hours = 10000;
  v.history.node_hours = 10000;
  v.history.node_failures = 2;
  v.price_per_gpu_hour = price;
  return v;
}

// dear: MFU 0.50 at 4.00 a GPU-hour. cheap: 0.40 (0.8x) at 2.00 (0.5x). The same H100s.
struct DearAndCheap {
  ClusterSpec dear = priced(make_cluster("dear").accelerator("h100"), 4.0);
  ClusterSpec cheap = priced(make_cluster("cheap").accelerator("h100"), 2.0);
  JobSpec job = make_job().nodes(2).gpus(4);
  std::vector<ClusterView> views() const {
    return {measured(dear, 0.5, 4), measured(cheap, 0.4, 2)};
  }
  PlacementRequest request(PlacementObjective objective) const {
    PlacementRequest req{&job};
    req.objective = objective;
    return req;
  }
};

TEST(CostObjective, ACheaperClusterAtFourFifthsTheMfuAndHalfThePriceWinsOnlyPerUnitOfMoney) {
  DearAndCheap s;
  auto views = s.views();
  const auto by_goodput =
      PlacementPipeline::standard().place(s.request(PlacementObjective::goodput), views);
  EXPECT_THAT(by_goodput.chosen, Optional(std::string("dear")));
  // The best gets the goodput's full weight (6), the other its share: 0.4 / 0.5 of it.
  EXPECT_NEAR(by_goodput.verdicts[1].parts[0].value, 6 * 0.8, 0.01);

  const auto per_cost =
      PlacementPipeline::standard().place(s.request(PlacementObjective::goodput_per_cost), views);
  EXPECT_THAT(per_cost.chosen, Optional(std::string("cheap")));
  // Per unit of money dear does 0.5 / 4 against cheap's 0.4 / 2: 0.625 of it.
  EXPECT_NEAR(per_cost.verdicts[0].parts[0].value, 6 * 0.625, 0.01);
  EXPECT_NEAR(per_cost.verdicts[1].parts[0].value, 6.0, 1e-9);
}

TEST(CostObjective, TheGoodputNoteShowsThePriceAndTheFlopAUnitOfMoneyBuys) {
  DearAndCheap s;
  auto views = s.views();
  GoodputScore g;
  const ScoreNote n = g.note(s.request(PlacementObjective::goodput_per_cost), views[1]);
  EXPECT_EQ(n.priced, ScoreNote::Priced::own);
  EXPECT_DOUBLE_EQ(n.price_per_gpu_hour, 2.0);
  EXPECT_EQ(n.currency, "USD");
  EXPECT_TRUE(n.per_cost);
  // 8 GPUs at 2.00 an hour cost 16 an hour: an hour's FLOP over 16.
  EXPECT_DOUBLE_EQ(n.flop_per_money, n.flops * 3600 / 16);
  EXPECT_THAT(note_text(n), HasSubstr(", 2.00 USD/GPU-h, "));
  EXPECT_THAT(note_text(n), HasSubstr(flop_text(n.flop_per_money, " per USD")));
  EXPECT_FALSE(g.note(s.request(PlacementObjective::goodput), views[1]).per_cost);
}

TEST(CostObjective, AClusterWithoutAPriceIsJudgedAtTheDearestPricedOnes) {
  ClusterSpec a = priced(make_cluster("a"), 3.0);
  ClusterSpec b = priced(make_cluster("b"), 1.5);
  ClusterSpec unpriced = make_cluster("c");
  std::vector<ClusterView> views = {ClusterView{&a}, ClusterView{&b}, ClusterView{&unpriced}};
  fill_prices(views, 0);
  EXPECT_DOUBLE_EQ(views[0].price_per_gpu_hour, 3.0);
  EXPECT_FALSE(views[0].price_assumed);
  EXPECT_DOUBLE_EQ(views[1].price_per_gpu_hour, 1.5);
  EXPECT_DOUBLE_EQ(views[2].price_per_gpu_hour, 3.0);
  EXPECT_TRUE(views[2].price_assumed);
  JobSpec job = make_job();
  PlacementRequest req{&job};
  req.objective = PlacementObjective::goodput_per_cost;
  EXPECT_THAT(GoodputScore().explain(req, views[2]),
              HasSubstr(", no price (judged at 3.00 USD/GPU-h)"));
}

TEST(CostObjective, AFleetWithoutPricesRanksAsGoodputDoesAndItsNotesSayNoPrice) {
  ClusterSpec h100 = make_cluster("h").accelerator("h100");
  ClusterSpec mi300 = make_cluster("m").accelerator("mi300x");
  std::vector<ClusterView> views = {ClusterView{&h100}, ClusterView{&mi300}};
  fill_prices(views, 0);
  EXPECT_EQ(views[0].price_per_gpu_hour, 0);
  EXPECT_FALSE(views[1].price_assumed);
  JobSpec job = make_job().nodes(2).gpus(4);
  PlacementRequest req{&job};
  req.objective = PlacementObjective::goodput_per_cost;
  const auto d = PlacementPipeline::standard().place(req, views);
  EXPECT_THAT(d.chosen, Optional(std::string("m")));
  EXPECT_THAT(d.verdicts[0].text(), StartsWith("goodput=4.540 "));  // 6 x 989 / 1307, as ever
  EXPECT_THAT(d.verdicts[0].text(), Not(HasSubstr("GPU-h")));
}

TEST(CostObjective, AFreeClusterRanksAboveEveryPricedOne) {
  DearAndCheap s;
  ClusterSpec free = priced(make_cluster("free").accelerator("h100"), 0.0);
  auto views = s.views();
  views.push_back(measured(free, 0.2, 0));
  const auto d =
      PlacementPipeline::standard().place(s.request(PlacementObjective::goodput_per_cost), views);
  EXPECT_THAT(d.chosen, Optional(std::string("free")));
  EXPECT_EQ(flop_per_money(1e15, 8, 0), 0);
}

TEST(CostObjective, ATeamsObjectiveOverridesTheFleets) {
  SchedulingSpec s;
  EXPECT_EQ(objective_of(s, "vision"), PlacementObjective::goodput);
  s.objective = "goodput_per_cost";
  EXPECT_EQ(objective_of(s, ""), PlacementObjective::goodput_per_cost);
  s.teams["vision"].objective = "goodput";
  s.teams["llm"] = TeamQuota{};
  EXPECT_EQ(objective_of(s, "vision"), PlacementObjective::goodput);
  EXPECT_EQ(objective_of(s, "llm"), PlacementObjective::goodput_per_cost);
  EXPECT_EQ(to_string(objective_of(s, "llm")), "goodput_per_cost");
}

TEST(CostObjective, AResumedJobMovesWhenTheMovePaysPerUnitOfMoney) {
  DearAndCheap s;
  auto views = s.views();
  PlacementRequest req = s.request(PlacementObjective::goodput_per_cost);
  req.previous_cluster = "dear";
  req.run_started_ms = 0;
  auto d = PlacementPipeline::standard().place(req, views);
  EXPECT_THAT(d.chosen, Optional(std::string("cheap")));
  req.objective = PlacementObjective::goodput;
  d = PlacementPipeline::standard().place(req, views);
  EXPECT_THAT(d.chosen, Optional(std::string("dear")));
}

}  // namespace
}  // namespace orch::testing
