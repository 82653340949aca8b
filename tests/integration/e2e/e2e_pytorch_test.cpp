// A real PyTorch trainer (examples/pytorch/train.py, written from docs/progress-protocol.md) run
// as issue 37 asks users to run jobs: by a `user` of team nlp, with a secret an administrator
// granted to nlp, writing checkpoints only in its own $ORCH_CHECKPOINT_DIR, as the site's job
// user when the server is root. Its site goes down mid-run; it resumes on the other site from
// the copy there and finishes. Skipped where PyTorch is not installed (`make test` installs
// Debian's python3-torch).
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

namespace fs = std::filesystem;

bool have_torch() {
  return run_process({"/usr/bin/python3", "-c", "import torch"}, milliseconds(60000)).exit_code ==
         0;
}

std::string sha256_of(const std::string& text) {
  return run_process({"/bin/sh", "-c", "printf %s '" + text + "' | sha256sum"}, milliseconds(10000))
      .output.substr(0, 64);
}

TEST_F(E2eTest, APyTorchJobGetsItsSecretKeepsItsCheckpointsAndResumesElsewhere) {
  if (!have_torch()) GTEST_SKIP() << "PyTorch is not installed (Debian's python3-torch)";
  // The trainer where the job's user can read it (the checkout may lie under /root).
  const std::string script = dir_->path() + "/train.py";
  fs::copy_file(ORCH_SOURCE_DIR "/examples/pytorch/train.py", script);
  ::chmod(script.c_str(), 0644);
  const std::string value = "hf_5e0d1c9b2a7f";
  write_file(dir_->path() + "/hf.token", value + "\n");
  ASSERT_EQ(
      cli({"secret", "set", "hf", "--from-file", dir_->path() + "/hf.token", "--teams", "nlp"})
          .exit_code,
      0);
  HttpResponse made = call(url_, "POST", "/api/v1/tokens",
                           json{{"name", "nina"}, {"role", "user"}, {"teams", {"nlp"}}}.dump());
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string nina = json::parse(made.body)["token"];

  const std::string spec =
      "name: mlp\n"
      "command: /usr/bin/python3 " +
      script +
      " --steps 120 --ckpt-every 10 --step-delay-s 0.05\n"
      "secret_env: {HF_TOKEN: {secret: hf}}\n"
      "resources: {nodes: 1, gpus_per_node: 1}\n"
      "model: {parameters: 4160}\n"
      "checkpoint: {interval_steps: 10}\n" +
      restart_yaml(0) + "placement: {preferred: [alpha]}\n";
  HttpResponse submitted = call_as(url_, nina, "POST", "/api/v1/jobs", spec, "application/yaml");
  ASSERT_EQ(submitted.status, 201) << submitted.body;
  const std::int64_t id = json::parse(submitted.body)["id"];
  json running = wait_trained_with_replica(id, "alpha", 25);
  ASSERT_FALSE(running.is_null());
  EXPECT_EQ(running["team"], "nlp");
  ASSERT_EQ(call(url_, "POST", "/api/v1/clusters/alpha/outage", R"({"down": true})").status, 200);

  final_timeout_ = milliseconds(180000);
  json done = wait_final(id);
  ASSERT_EQ(done.value("state", ""), "succeeded") << describe_job(url_, id);
  json list = attempts(id);
  ASSERT_EQ(list.size(), 2u) << describe_job(url_, id);
  EXPECT_EQ(list[1]["cluster"], "beta");
  ASSERT_TRUE(list[1]["resumed_from"].is_object()) << list.dump();
  EXPECT_GE(list[1]["resumed_from"]["step"].get<int>(), 10);
  const std::string logs = call(url_, "GET", "/api/v1/jobs/" + std::to_string(id) + "/logs").body;
  EXPECT_NE(logs.find("HF_TOKEN sha256 " + sha256_of(value)), std::string::npos) << logs;
  EXPECT_NE(logs.find("resumed from step"), std::string::npos) << logs;
  // Every checkpoint it registered lies in its own directory, at whichever site saved it.
  json ckpts = get_json(url_, "/api/v1/jobs/" + std::to_string(id) + "/checkpoints");
  ASSERT_FALSE(ckpts["checkpoints"].empty());
  for (const auto& c : ckpts["checkpoints"]) {
    EXPECT_NE(c.value("path", "").find("/job-" + std::to_string(id) + "/step-"), std::string::npos)
        << c.dump();
  }
  expect_secrets_nowhere({value}, id);
}

}  // namespace
}  // namespace orch::e2e
