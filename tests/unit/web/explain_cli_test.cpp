// `orchestrate job explain` lists, per cluster, every filter that refused it and each preemption
// the decision considered there, taken or not, and why (issue 42); the JSON is the backend's
// (web/backend/scheduler_backend.cpp explain_job).
#include <gmock/gmock.h>

#include <sstream>

#include "cli/job_render.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

nlohmann::json hero_waits() {
  return nlohmann::json::parse(R"({
    "job_id": 3, "state": "pending", "reason": "waiting for capacity", "priority": 1000,
    "priority_class": "hero", "evaluated_at_ms": 1000, "chosen": null, "preemption": [],
    "mfu_flag": "",
    "clusters": [
      {"cluster": "east", "feasible": false, "score": null,
       "reason": "capacity: only 0 of 8 GPUs free, job needs 4",
       "refused_by": [{"filter": "capacity", "reason": "only 0 of 8 GPUs free, job needs 4"}],
       "preemptions": [{"job_id": 2, "job_name": "lr-sweep-1", "team": "vision", "gpus": 4,
                        "taken": false, "why": "team vision within its quota 4/4, protected"}],
       "preemptions_more": 3},
      {"cluster": "west", "feasible": false, "score": null,
       "reason": "site-healthy: site is down",
       "refused_by": [{"filter": "site-healthy", "reason": "site is down"},
                      {"filter": "capacity", "reason": "only 2 of 4 GPUs free, job needs 4"}],
       "preemptions": [], "preemptions_more": 0},
      {"cluster": "north", "feasible": false, "score": null,
       "reason": "admission: cluster is retired",
       "refused_by": [{"filter": "admission", "reason": "cluster is retired"}],
       "preemptions": [], "preemptions_more": 0}]})");
}

TEST(ExplainCli, EachClusterListsItsRefusalsAndThePreemptionsConsideredWithWhy) {
  std::ostringstream out;
  render_explain(hero_waits(), out);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("per cluster:\n  east\n"
                              "    refused by capacity: only 0 of 8 GPUs free, job needs 4\n"
                              "    preemption of job 2 lr-sweep-1 (team vision, 4 GPU(s)): not "
                              "taken; team vision within its quota 4/4, protected\n"
                              "    and 3 more preemption(s) considered\n"));
  EXPECT_THAT(text, HasSubstr("  west\n    refused by site-healthy: site is down\n"
                              "    refused by capacity: only 2 of 4 GPUs free, job needs 4\n"));
  EXPECT_THAT(text, Not(HasSubstr("  north\n"))) << "one refusal is the table's reason already";
}

TEST(ExplainCli, AnAnswerWithoutTheNewFieldsRendersAsBefore) {
  nlohmann::json old = hero_waits();
  for (auto& c : old["clusters"]) {
    c.erase("refused_by");
    c.erase("preemptions");
    c.erase("preemptions_more");
  }
  std::ostringstream out;
  render_explain(old, out);
  EXPECT_THAT(out.str(), HasSubstr("capacity: only 0 of 8 GPUs free, job needs 4"));
  EXPECT_THAT(out.str(), Not(HasSubstr("per cluster:")));
}

// Issue 45: where the fleet has prices, each cluster's goodput, price and useful FLOP per unit of
// money are columns of their own, and the objective that ranked them is named.
TEST(ExplainCli, APricedFleetShowsGoodputPriceAndFlopPerUnitOfMoneyPerCluster) {
  const auto priced = nlohmann::json::parse(R"({
    "job_id": 4, "state": "placed", "reason": "", "priority": 0, "priority_class": "",
    "evaluated_at_ms": 1000, "chosen": "cheap", "objective": "goodput_per_cost",
    "preemption": [], "mfu_flag": "",
    "clusters": [
      {"cluster": "dear", "feasible": true, "score": 7.75, "reason": "goodput=3.750",
       "refused_by": [], "preemptions": [], "preemptions_more": 0,
       "goodput_flops": 1e12, "price_per_gpu_hour": 4.0, "price_assumed": false,
       "currency": "USD", "goodput_per_cost": 4.5e14},
      {"cluster": "spare", "feasible": true, "score": 5, "reason": "goodput=2.000",
       "refused_by": [], "preemptions": [], "preemptions_more": 0,
       "goodput_flops": 8e11, "price_per_gpu_hour": 4.0, "price_assumed": true,
       "currency": "USD", "goodput_per_cost": null},
      {"cluster": "cheap", "feasible": true, "score": 10, "reason": "goodput=6.000",
       "refused_by": [], "preemptions": [], "preemptions_more": 0,
       "goodput_flops": 8e11, "price_per_gpu_hour": 2.0, "price_assumed": false,
       "currency": "USD", "goodput_per_cost": 7.2e14}]})");
  std::ostringstream out;
  render_explain(priced, out);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("objective: goodput_per_cost\n"));
  EXPECT_THAT(text, HasSubstr("GOODPUT"));
  EXPECT_THAT(text, HasSubstr("PRICE/GPU-H"));
  EXPECT_THAT(text, HasSubstr("1 TFLOP/s"));
  EXPECT_THAT(text, HasSubstr("4.00 USD (assumed)"));
  EXPECT_THAT(text, HasSubstr("720 TFLOP per USD"));
  EXPECT_THAT(text, HasSubstr("450 TFLOP per USD"));

  std::ostringstream unpriced;
  render_explain(hero_waits(), unpriced);
  EXPECT_THAT(unpriced.str(), Not(HasSubstr("PRICE/GPU-H")));
  EXPECT_THAT(unpriced.str(), Not(HasSubstr("objective:")));
}

}  // namespace
}  // namespace orch
