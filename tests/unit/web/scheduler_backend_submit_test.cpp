// Issue 42 through the REST routes over the real backend: a job no configured cluster could
// ever hold is refused at submit (422, each cluster's largest shape) and kept with
// ?queue_anyway=true; checkpoint advice from priors says so (basis "prior"); an attempt that
// never launched says why and resumed from nothing.
#include <gmock/gmock.h>

#include "tests/harness/builders.h"
#include "tests/unit/web/backend_fixture.h"
#include "web/job_routes.h"
#include "web/router.h"

namespace orch {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::make_cluster;
using testing::make_job;

class BackendSubmit : public BackendFixture {
 protected:
  void SetUp() override {
    open({make_cluster("east").nodes(8).gpus_per_node(8).accelerator("h100"),
          make_cluster("west").nodes(2).gpus_per_node(4).accelerator("a100")});
  }
  HttpResponse post(const std::string& target, const std::string& body) {
    Router router;
    add_rows(router, job_routes(*backend_));
    return router.dispatch(make_request("POST", target, body, "application/yaml"));
  }
  static constexpr const char* kWide =
      "name: wide\ncommand: 'true'\nresources: {nodes: 4, gpus_per_node: 64}\n";
};

TEST_F(BackendSubmit, AJobNoClusterCanHoldIsRefusedWith422AndKeptWithQueueAnyway) {
  loop_->start();
  const HttpResponse refused = post("/api/v1/jobs?source=wide.yaml", kWide);
  EXPECT_EQ(refused.status, 422) << refused.body;
  const std::string detail = json::parse(refused.body).value("detail", "");
  EXPECT_THAT(detail, HasSubstr("wide.yaml:3:"));
  EXPECT_THAT(detail, HasSubstr("no configured cluster can ever hold this job (4 nodes x 64 "
                                "GPUs): east offers at most 8 nodes x 8 H100; west at most 2 "
                                "nodes x 4 A100; use --queue-anyway"));

  EXPECT_EQ(post("/api/v1/jobs?queue_anyway=perhaps", kWide).status, 400);
  const HttpResponse kept = post("/api/v1/jobs?queue_anyway=true", kWide);
  ASSERT_EQ(kept.status, 201) << kept.body;
  EXPECT_EQ(json::parse(kept.body)["state"], "pending");
  const json job =
      json::parse(backend_->get_job(json::parse(kept.body)["id"].get<std::int64_t>()).value().text);
  EXPECT_THAT(job["reason"].get<std::string>(), HasSubstr("fits no configured cluster"));
  loop_->stop();
}

TEST_F(BackendSubmit, CheckpointAdviceFromPriorsSaysSo) {
  handle(SubmitJob{make_job().gpus(8)});
  const json job = json::parse(backend_->get_job(1).value().text);
  ASSERT_TRUE(job["checkpoint_advice"].is_object()) << job.dump();
  EXPECT_EQ(job["checkpoint_advice"]["basis"], "prior");
  EXPECT_EQ(backend_->explain_job(1).value()["advice_basis"], "prior");
}

TEST_F(BackendSubmit, AnAttemptThatNeverLaunchedSaysWhyAndResumedFromNothing) {
  handle(SubmitJob{make_job().gpus(8)});
  AttemptRow a = store_->attempts_of(1).value().at(0);
  a.resumed_from_step = 10;
  a.resumed_from_path = "/ckpt/job-1/step-10";
  a.not_launched = "its checkpoint at step 10 was gone";
  ASSERT_TRUE(store_->update_attempt(a).ok());
  const json attempts = backend_->job_attempts(1).value();
  const json& first = attempts["attempts"][0];
  EXPECT_EQ(first["not_launched"], "its checkpoint at step 10 was gone");
  EXPECT_TRUE(first["resumed_from"].is_null());
  EXPECT_EQ(json::parse(backend_->get_job(1).value().text)["attempts"], 0)
      << "it was no try of the job's";
}

}  // namespace
}  // namespace orch
