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

}  // namespace
}  // namespace orch
