// A job's code and setup on a real 2-node lab cluster (issue 40; label slurm): the archive
// staging leaves at <storage>/code/<hash>.tar is extracted once on the shared filesystem, the
// setup (a venv made in the workdir) runs as its own step before the tasks' step, both tasks
// of the gang start in the tree with ORCH_WORKDIR under bash and run `python -m mypkg.train`
// from the venv; a second job with the same setup key finds it cached and starts at once; a
// failing setup ends its attempt setup_failed with its last lines.
// A gang that loses a node resumes (the next attempt, launched here as the brain would: the
// lost node excluded) from its checkpoint without running the setup or extracting the code
// again. That the code is not sent again is the server's transfer records' (code_stager_test).

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/slurm/slurm_site.h"
#include "scheduler/model/workdir.h"
#include "testkit/slurm_lab.h"
#include "tests/integration/slurm_lab/site_run.h"

namespace orch::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using ::testing::Contains;
using ::testing::HasSubstr;

const std::string kAgent = ORCH_BIN_DIR "/orchestrate-agent";
const std::string kHash(64, 'e');

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class SlurmWorkdirLab : public LabSiteTest {
 protected:
  void SetUp() override {
    start_lab(3, kAgent);
    if (HasFatalFailure()) return;
    // The package, packed where staging puts it.
    const fs::path src = fs::path(spec_.storage_root).parent_path() / "src";
    fs::create_directories(src / "mypkg");
    std::ofstream(src / "mypkg/__init__.py") << "";
    std::ofstream(src / "mypkg/train.py")
        << "import os, sys\n"
           "print('trained rank', os.environ.get('ORCH_TASK_RANK'), 'in', os.getcwd(),\n"
           "      'venv', sys.prefix, 'workdir', os.environ.get('ORCH_WORKDIR'))\n";
    fs::create_directories(code_dir(spec_.storage_root));
    const std::string tar =
        "tar -C " + src.string() + " -cf " + code_archive_path(spec_.storage_root, kHash) + " .";
    ASSERT_EQ(std::system(tar.c_str()), 0);
  }

  LaunchRequest job(const std::string& token, const std::string& setup) {
    LaunchRequest r;
    r.token = token;
    r.job_id = 40;
    r.attempt_no = 1;
    r.job_name = "workdir";
    r.nodes = 2;
    r.gpus_per_node = 1;
    r.shell = "bash";
    r.command = "source .venv/bin/activate && python -m mypkg.train";
    r.code_sha256 = kHash;
    r.code_archive = code_archive_path(spec_.storage_root, kHash);
    r.workdir = code_tree_path(spec_.storage_root, kHash);
    r.env["ORCH_WORKDIR"] = r.workdir;
    r.setup = setup;
    r.setup_key = setup_key("alpha", kHash, setup, "");
    r.setup_dir = setup_dir_path(spec_.storage_root, r.setup_key);
    return r;
  }

  // Launches and observes until the attempt ends (three minutes at most); its output lines.
  RunObservation run(const LaunchRequest& r, std::vector<std::string>& lines) {
    auto launched = site_->launch(r);
    EXPECT_TRUE(launched.ok()) << (launched.ok() ? "" : launched.error().message);
    return run_until_exited(r.token, lines);
  }

  RunObservation run_until_exited(const std::string& token, std::vector<std::string>& lines) {
    return observe_until_exited(*site_, token, lines);
  }
};

TEST_F(SlurmWorkdirLab, AGangStartsInItsCodeAfterOneSetupAndTheNextJobFindsItCached) {
  const std::string setup =
      "echo ran >>setup-runs.txt && python3 -m venv --without-pip .venv && echo made-venv";
  std::vector<std::string> first;
  RunObservation a = run(job("orch-40-1-wa", setup), first);
  ASSERT_EQ(a.phase, RunPhase::exited) << ::testing::PrintToString(first);
  ASSERT_TRUE(a.exit);
  EXPECT_EQ(a.exit->exit_code, 0) << a.exit->detail << ::testing::PrintToString(first);
  const std::string tree = code_tree_path(spec_.storage_root, kHash);
  EXPECT_THAT(first, Contains(HasSubstr("[setup] made-venv")));
  EXPECT_THAT(first, Contains(HasSubstr("trained rank 0 in " + tree + " venv " + tree +
                                        "/.venv workdir " + tree)));
  EXPECT_THAT(first, Contains(HasSubstr("trained rank 1 in " + tree)));
  EXPECT_TRUE(fs::exists(setup_dir_path(spec_.storage_root, setup_key("alpha", kHash, setup, "")) +
                         "/done"));

  std::vector<std::string> second;
  RunObservation b = run(job("orch-40-2-wb", setup), second);
  ASSERT_TRUE(b.exit);
  EXPECT_EQ(b.exit->exit_code, 0) << b.exit->detail << ::testing::PrintToString(second);
  EXPECT_THAT(second, Contains(HasSubstr("[setup] cached")));
  EXPECT_THAT(second, Contains(HasSubstr("trained rank 1 in " + tree)));
  // Extracted once, set up once for both jobs.
  EXPECT_EQ(slurp(tree + "/setup-runs.txt"), "ran\n");
  for (const auto& e : fs::directory_iterator(code_dir(spec_.storage_root))) {
    EXPECT_EQ(e.path().filename().string().find(".part."), std::string::npos) << e.path();
  }
}

TEST_F(SlurmWorkdirLab, AGangThatLosesANodeResumesWithoutSetupOrExtractionAgain) {
  // The trainer saves a "checkpoint" (its step) in the job's own directory and resumes from it.
  const std::string ckpt = fs::path(spec_.storage_root).string() + "/ckpt-40";
  const std::string setup = "echo ran >>setup-runs.txt && python3 -m venv --without-pip .venv";
  const std::string train = "source .venv/bin/activate && step=$(cat " + ckpt +
                            " 2>/dev/null || echo 0) && "
                            "echo \"resumed at $step in $(pwd)\" && "
                            "if [ \"$ORCH_TASK_RANK\" = 0 ]; then echo $((step + 100)) >" +
                            ckpt +
                            "; fi && "
                            "if [ \"$step\" = 0 ]; then sleep 300; fi";
  LaunchRequest first = job("orch-40-4-na", setup);
  first.command = train;
  first.heartbeat_s = 0.5;
  first.heartbeat_timeout_s = 4;
  auto launched = site_->launch(first);
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  const std::string tree = code_tree_path(spec_.storage_root, kHash);
  // Running on two nodes, the checkpoint saved: then one node dies.
  std::vector<std::string> nodes;
  const auto until = Clock::now() + std::chrono::minutes(2);
  while (Clock::now() < until) {
    auto obs = site_->observe(first.token, 0);
    if (obs.ok() && obs->phase == RunPhase::running && fs::exists(ckpt) && obs->nodes.size() == 2) {
      nodes = obs->nodes;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  ASSERT_EQ(nodes.size(), 2u) << "the gang never ran";
  const auto extracted = fs::last_write_time(tree);
  ASSERT_TRUE(lab_->kill_node("alpha", nodes[1]).ok());
  std::vector<std::string> lost_lines;
  RunObservation lost = run_until_exited(first.token, lost_lines);
  ASSERT_TRUE(lost.exit);
  EXPECT_EQ(lost.exit->cause, ExitCause::node_lost) << lost.exit->detail;

  // The next attempt (what the brain launches): without the lost node, same code, same setup.
  LaunchRequest second = job("orch-40-5-nb", setup);
  second.attempt_no = 2;
  second.command = train;
  second.exclude_nodes = {nodes[1]};
  std::vector<std::string> lines;
  RunObservation resumed = run(second, lines);
  ASSERT_TRUE(resumed.exit);
  EXPECT_EQ(resumed.exit->exit_code, 0) << resumed.exit->detail << ::testing::PrintToString(lines);
  EXPECT_THAT(lines, Contains(HasSubstr("[setup] cached")));
  EXPECT_THAT(lines, Contains(HasSubstr("resumed at 100 in " + tree)));
  EXPECT_EQ(slurp(tree + "/setup-runs.txt"), "ran\n");
  EXPECT_EQ(fs::last_write_time(tree), extracted);
}

TEST_F(SlurmWorkdirLab, AFailingSetupEndsTheAttemptSetupFailedWithItsLastLines) {
  std::vector<std::string> lines;
  RunObservation a =
      run(job("orch-40-3-wf", "echo 'ERROR: No matching distribution found for torch' >&2; exit 5"),
          lines);
  ASSERT_EQ(a.phase, RunPhase::exited) << ::testing::PrintToString(lines);
  ASSERT_TRUE(a.exit);
  EXPECT_EQ(a.exit->cause, ExitCause::setup_failed) << a.exit->detail;
  EXPECT_THAT(a.exit->detail, HasSubstr("setup failed (exit 5)"));
  EXPECT_THAT(a.exit->detail, HasSubstr("No matching distribution found for torch"));
  EXPECT_THAT(lines, ::testing::Not(Contains(HasSubstr("trained rank"))));
}

}  // namespace
}  // namespace orch::test
