// GET /jobs and GET /jobs/{id} say what a job is (issue 42, item 2): each row carries its
// reason, GPUs in all, priority (and class), team, group and the values of its sweep point; the
// job's spec names the secrets its variables get, never a value.
#include <gtest/gtest.h>

#include "scheduler/brain/brain.h"
#include "scheduler/runtime/brain_loop.h"
#include "scheduler/spec/job_spec_parser.h"
#include "tests/harness/builders.h"
#include "tests/unit/web/backend_fixture.h"
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using nlohmann::json;
using testing::make_cluster;
using testing::make_job;

class BackendJobRows : public BackendFixture {
 protected:
  // alpha: 2 nodes x 4 GPUs.
  void SetUp() override { open({make_cluster("alpha")}); }

  json rows() {
    auto text = backend_->list_jobs(JobFilter{});
    EXPECT_TRUE(text.ok()) << text.error().message;
    return text.ok() ? json::parse(text->text)["jobs"] : json::array();
  }
  json row_of(std::int64_t id) {
    for (const auto& r : rows()) {
      if (r["id"] == id) return r;
    }
    return nullptr;
  }
  json job(std::int64_t id) {
    auto text = backend_->get_job(id);
    EXPECT_TRUE(text.ok()) << text.error().message;
    return text.ok() ? json::parse(text->text) : json(nullptr);
  }
  std::int64_t submit(const JobSpec& spec) {
    auto r = brain_->handle(SubmitJob{spec});
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? r->job_id : 0;
  }
};

TEST_F(BackendJobRows, ARowSaysItsReasonGpusPriorityTeamAndGroup) {
  // The first holds all of alpha's GPUs; the second, as big, waits.
  const std::int64_t big = submit(make_job().name("big").nodes(2).gpus(4).team("vision"));
  JobSpec waiting = make_job().name("hero").nodes(2).gpus(4).team("nlp").priority(-5);
  waiting.group = "ablations";
  const std::int64_t hero = submit(waiting);
  const json row = row_of(hero);
  ASSERT_TRUE(row.is_object());
  EXPECT_EQ(row["state"], "pending");
  EXPECT_NE(row["reason"], "") << "a waiting job says why";
  EXPECT_EQ(row["gpus"], 8);
  EXPECT_EQ(row["priority"], -5);
  EXPECT_EQ(row["priority_class"], "");
  EXPECT_EQ(row["team"], "nlp");
  EXPECT_EQ(row["group"], "ablations");
  EXPECT_EQ(row["sweep_point"], "");
  EXPECT_EQ(row_of(big)["team"], "vision");
  // The job's own answer carries the same row.
  const json one = job(hero);
  for (const char* key : {"reason", "gpus", "priority", "priority_class", "team", "group"}) {
    EXPECT_EQ(one[key], row[key]) << key;
  }
}

TEST_F(BackendJobRows, EachSweepPointIsListedWithItsValues) {
  auto spec = parse_job_spec(
      "name: lr-sweep\ncommand: python train.py\nresources: {nodes: 1, gpus_per_node: 1}\n"
      "sweep: {env: {LR: [1e-4, 3e-4]}, args: [\"--seed 1\"]}\n",
      "sweep.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto r = brain_->handle(SubmitJob{*spec});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->jobs.size(), 2u);
  const json first = row_of(r->jobs[0].id);
  const json second = row_of(r->jobs[1].id);
  EXPECT_EQ(first["name"], "lr-sweep-1");
  EXPECT_EQ(first["sweep_point"], "LR=1e-4 --seed 1");
  EXPECT_EQ(second["sweep_point"], "LR=3e-4 --seed 1");
  EXPECT_EQ(first["group"], "lr-sweep");
  EXPECT_EQ(job(r->jobs[0].id)["sweep_point"], "LR=1e-4 --seed 1");
  EXPECT_EQ(job(r->jobs[0].id)["spec"]["command"], "python train.py --seed 1");
}

TEST_F(BackendJobRows, TheSpecShowsWhatTheUserWroteAndOnlyTheNamesOfSecrets) {
  JobSpec spec = make_job().name("bert").nodes(1).gpus(2).time_limit_s(7200);
  spec.command = "torchrun train.py";
  spec.env = {{"WANDB_MODE", "offline"}};
  spec.secret_env = {{"HF_TOKEN", "hf-read"}};
  const json one = job(submit(spec));
  ASSERT_TRUE(one.is_object());
  EXPECT_EQ(one["spec"]["command"], "torchrun train.py");
  EXPECT_EQ(one["spec"]["env"], json({{"WANDB_MODE", "offline"}}));
  EXPECT_EQ(one["spec"]["time_limit"], 7200);
  // The variable and the secret's name: the value lives only in the server's secret registry.
  EXPECT_EQ(one["spec"]["secret_env"], json({{"HF_TOKEN", {{"secret", "hf-read"}}}}));
  EXPECT_FALSE(rows().at(0).contains("spec")) << "the list stays small";
}

}  // namespace
}  // namespace orch
