// Dependencies between jobs through the real server (issue 45, docs/config.md "Dependencies:
// `after`"): a train -> eval chain submitted with `orchestrate job submit --after train`, where
// eval runs on train's newest verified checkpoint ($ORCH_AFTER_TRAIN_CHECKPOINT); a failed train
// cancels eval with the reason; a job that waits for itself is refused at submit, naming where. The
// PyTorch case runs examples/pytorch/train.py and examples/pytorch/evaluate.py as a user would
// (skipped where PyTorch is not installed).
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

namespace fs = std::filesystem;

class E2eDependency : public E2eTest {
 protected:
  // `orchestrate job submit FILE --after ...`: the new id (0 after a test failure).
  std::int64_t submit_after(const std::string& name, const std::string& yaml,
                            const std::string& after) {
    const std::string path = dir_->path() + "/" + name + ".yaml";
    write_file(path, yaml);
    ProcessResult r = cli({"job", "submit", path, "--after", after});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::string out = r.output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return std::atoll(out.substr(out.find_last_of('\n') + 1).c_str());
  }
  std::string logs(std::int64_t id) {
    return call(url_, "GET", "/api/v1/jobs/" + std::to_string(id) + "/logs").body;
  }
  // The newest checkpoint the job registered: {step, path}.
  json newest_checkpoint(std::int64_t id) {
    json list = get_json(url_, "/api/v1/jobs/" + std::to_string(id) + "/checkpoints");
    json best;
    for (const auto& c : list["checkpoints"]) {
      if (best.is_null() || c["step"].get<int>() > best["step"].get<int>()) best = c;
    }
    return best;
  }
};

TEST_F(E2eDependency, EvalWaitsForTrainAndRunsOnItsLastVerifiedCheckpoint) {
  const std::int64_t train =
      submit(job_yaml("train", "--steps 60 --step-delay-ms 20 --ckpt-every 10"));
  ASSERT_GT(train, 0);
  const std::int64_t eval =
      submit_after("eval",
                   "name: eval\n"
                   "command: echo \"evaluating $ORCH_AFTER_TRAIN_CHECKPOINT\"; "
                   "test -e \"$ORCH_AFTER_TRAIN_CHECKPOINT\"\n",
                   "train");
  ASSERT_GT(eval, 0);
  json waiting = job(eval);
  EXPECT_EQ(waiting["state"], "pending") << waiting.dump();
  EXPECT_EQ(waiting["reason"], "waiting for job " + std::to_string(train) + " (train) to succeed")
      << waiting.dump();

  json trained = wait_final(train);
  ASSERT_EQ(trained["state"], "succeeded") << describe_job(url_, train);
  json done = wait_final(eval);
  ASSERT_EQ(done["state"], "succeeded") << describe_job(url_, eval) << logs(eval);
  const json last = newest_checkpoint(train);
  ASSERT_EQ(last["step"], 60) << last.dump();
  const std::string base = fs::path(last["path"].get<std::string>()).filename();
  const std::string said = logs(eval);
  const auto at = said.find("evaluating /");
  ASSERT_NE(at, std::string::npos) << said;
  EXPECT_NE(said.find(base, at), std::string::npos) << said << "\nnewest: " << last.dump();
}

TEST_F(E2eDependency, AFailedTrainCancelsEvalWithTheReason) {
  const std::int64_t train = submit(
      job_yaml("train", "--steps 40 --step-delay-ms 20 --crash-at-step 20", restart_yaml(0)));
  ASSERT_GT(train, 0);
  const std::int64_t eval =
      submit("name: eval\ncommand: echo never\nafter: [{job: " + std::to_string(train) + "}]\n");
  ASSERT_GT(eval, 0);
  ASSERT_EQ(wait_final(train)["state"], "failed") << describe_job(url_, train);
  json done = wait_final(eval);
  EXPECT_EQ(done["state"], "cancelled") << done.dump();
  EXPECT_EQ(done["reason"],
            "job " + std::to_string(train) + " (train) failed: it can no longer succeed")
      << done.dump();
  EXPECT_TRUE(attempts(eval).empty()) << attempts(eval).dump();
}

TEST_F(E2eDependency, AJobThatWaitsForItselfIsRefusedAtSubmitNamingWhere) {
  const std::string path = dir_->path() + "/loop.yaml";
  write_file(path, "name: loop\ncommand: echo loop\nafter:\n  - {job: loop}\n");
  ProcessResult r = cli({"job", "submit", path});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("a cycle: job loop would wait for itself"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("after[0]"), std::string::npos) << r.output;
}

bool have_torch() {
  return run_process({"/usr/bin/python3", "-c", "import torch"}, milliseconds(60000)).exit_code ==
         0;
}

TEST_F(E2eDependency, APyTorchEvalLoadsTheLastCheckpointOfThePyTorchTrainer) {
  if (!have_torch()) GTEST_SKIP() << "PyTorch is not installed (Debian's python3-torch)";
  for (const char* f : {"train.py", "evaluate.py"}) {  // where the job's user can read them
    const std::string to = dir_->path() + "/" + f;
    fs::copy_file(std::string(ORCH_SOURCE_DIR "/examples/pytorch/") + f, to);
    ::chmod(to.c_str(), 0644);
  }
  const std::int64_t train =
      submit("name: train\ncommand: /usr/bin/python3 " + dir_->path() +
             "/train.py --steps 60 --ckpt-every 20 --step-delay-s 0.02\n"
             "resources: {nodes: 1, gpus_per_node: 1}\nmodel: {parameters: 4160}\n" +
             restart_yaml(0));
  ASSERT_GT(train, 0);
  const std::int64_t eval = submit_after(
      "eval", "name: eval\ncommand: /usr/bin/python3 " + dir_->path() + "/evaluate.py\n",
      "train:succeeded");
  ASSERT_GT(eval, 0);
  final_timeout_ = milliseconds(180000);
  ASSERT_EQ(wait_final(train)["state"], "succeeded") << describe_job(url_, train);
  json done = wait_final(eval);
  ASSERT_EQ(done["state"], "succeeded") << describe_job(url_, eval) << logs(eval);
  const std::string said = logs(eval);
  EXPECT_NE(said.find("evaluated step 60 of /"), std::string::npos) << said;
  EXPECT_NE(said.find("step-60.pt: mse "), std::string::npos) << said;
}

}  // namespace
}  // namespace orch::e2e
