// A job's code and setup on the local site (issue 40): every task starts in the extracted tree
// with ORCH_WORKDIR naming it, the setup runs once for two jobs with the same key (and once for
// a gang's tasks), and a failing setup ends the attempt setup_failed with its last lines.
#include <gmock/gmock.h>

#include "scheduler/model/workdir.h"
#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;

const std::string kHash(64, 'd');

class LocalWorkdirTest : public LocalSiteTest {
 protected:
  void SetUp() override {
    LocalSiteTest::SetUp();
    const fs::path src = fs::path(root_) / "src";
    fs::create_directories(src / "mypkg");
    std::ofstream(src / "mypkg/train.py") << "print('training')\n";
    // What staging leaves at the site: the archive under <root>/code.
    fs::create_directories(code_dir(root_));
    const std::string cmd =
        "tar -C " + src.string() + " -cf " + code_archive_path(root_, kHash) + " .";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  LaunchRequest code_job(const std::string& token, const std::string& command,
                         const std::string& setup = "") {
    LaunchRequest r = request(token, command);
    r.code_sha256 = kHash;
    r.code_archive = code_archive_path(root_, kHash);
    r.workdir = code_tree_path(root_, kHash);
    r.env["ORCH_WORKDIR"] = r.workdir;
    if (!setup.empty()) {
      r.setup = setup;
      r.setup_key = setup_key("loc", kHash, setup, "");
      r.setup_dir = setup_dir_path(root_, r.setup_key);
    }
    return r;
  }

  std::string workdir() const { return code_tree_path(root_, kHash); }
};

TEST_F(LocalWorkdirTest, ATaskStartsInTheExtractedTreeNamedByOrchWorkdir) {
  launch_ok(code_job("orch-1-1-w",
                     "echo \"pwd=$(pwd -P)\"; echo \"wd=$ORCH_WORKDIR\"; "
                     "echo \"run=$ORCH_RUN_DIR\"; cat mypkg/train.py"));
  std::vector<std::string> lines;
  RunObservation obs = wait_exited("orch-1-1-w", &lines);
  ASSERT_TRUE(obs.exit);
  EXPECT_EQ(obs.exit->exit_code, 0);
  const std::string real = fs::canonical(workdir()).string();
  EXPECT_THAT(lines, Contains("pwd=" + real));
  EXPECT_THAT(lines, Contains("wd=" + workdir()));
  EXPECT_THAT(lines, Contains("print('training')"));
  // ORCH_RUN_DIR stays the attempt's own directory.
  EXPECT_THAT(lines, Contains("run=" + site_->run_dir("orch-1-1-w") + "/work"));
}

TEST_F(LocalWorkdirTest, TwoJobsWithTheSameSetupKeyRunItOnce) {
  const std::string setup = "echo ran >>setup-runs.txt; mkdir -p .venv";
  launch_ok(code_job("orch-2-1-a", "test -d .venv && echo venv-here", setup));
  std::vector<std::string> first;
  ASSERT_EQ(wait_exited("orch-2-1-a", &first).exit->exit_code, 0);
  launch_ok(code_job("orch-3-1-b", "test -d .venv && echo venv-here", setup));
  std::vector<std::string> second;
  ASSERT_EQ(wait_exited("orch-3-1-b", &second).exit->exit_code, 0);
  EXPECT_THAT(first, Contains("venv-here"));
  EXPECT_THAT(second, Contains("venv-here"));
  EXPECT_THAT(second, Contains(HasSubstr("[setup] cached")));
  EXPECT_EQ(slurp(workdir() + "/setup-runs.txt"), "ran\n");
}

TEST_F(LocalWorkdirTest, AGangsTasksRunTheSetupOnce) {
  LaunchRequest r = code_job("orch-4-1-g", "echo task-$ORCH_TASK_RANK", "echo ran >>runs.txt");
  r.nodes = 2;
  r.tasks_per_node = 2;
  launch_ok(r);
  std::vector<std::string> lines;
  RunObservation obs = wait_exited("orch-4-1-g", &lines);
  ASSERT_TRUE(obs.exit);
  EXPECT_EQ(obs.exit->exit_code, 0);
  EXPECT_EQ(slurp(workdir() + "/runs.txt"), "ran\n");
}

TEST_F(LocalWorkdirTest, AFailingSetupEndsTheAttemptSetupFailedWithItsLastLines) {
  launch_ok(code_job("orch-5-1-f", "echo never-runs",
                     "echo 'ERROR: Could not find a version that satisfies torch'; exit 4"));
  std::vector<std::string> lines;
  RunObservation obs = wait_exited("orch-5-1-f", &lines);
  ASSERT_TRUE(obs.exit);
  EXPECT_EQ(obs.exit->cause, ExitCause::setup_failed);
  EXPECT_EQ(obs.exit->exit_code, 4);
  EXPECT_THAT(obs.exit->detail, HasSubstr("setup failed (exit 4)"));
  EXPECT_THAT(obs.exit->detail, HasSubstr("Could not find a version"));
  EXPECT_THAT(lines, Contains(HasSubstr("[setup] failed with exit 4")));
  EXPECT_THAT(lines, ::testing::Not(Contains("never-runs")));
}

}  // namespace
}  // namespace orch::testing
