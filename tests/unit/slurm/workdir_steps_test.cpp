// The batch script's lines for a job's code and setup (workdir_steps.h, issue 40): the code
// extracted and the setup run as its own step before the tasks' step, which starts in the tree;
// and the poll round reading a run directory's setup_failed marker.
#include "adapters/slurm/workdir_steps.h"

#include <gmock/gmock.h>

#include <filesystem>
#include <fstream>

#include "adapters/slurm/batch_script.h"
#include "adapters/slurm/observe_command.h"
#include "scheduler/model/workdir.h"
#include "tests/unit/slurm/process_test_util.h"

namespace orch::slurm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kHash(64, '7');
const std::string kAgent = "/shared/orch/bin/orchestrate-agent";

LaunchRequest code_request(bool per_node = false) {
  LaunchRequest r;
  r.token = "orch-40-1-abc";
  r.job_id = 40;
  r.attempt_no = 1;
  r.job_name = "code";
  r.command = "python -m mypkg.train";
  r.nodes = 2;
  r.gpus_per_node = 1;
  r.code_sha256 = kHash;
  r.code_archive = code_archive_path("/shared/orch", kHash);
  r.workdir = code_tree_path("/shared/orch", kHash);
  r.env["ORCH_WORKDIR"] = r.workdir;
  r.setup = "python3 -m venv .venv && echo 'it''s set up'";
  r.setup_per_node = per_node;
  r.setup_key = setup_key("alpha", kHash, r.setup, "");
  r.setup_dir = setup_dir_path("/shared/orch", r.setup_key);
  return r;
}

ClusterSpec cluster() {
  ClusterSpec c;
  c.name = "alpha";
  c.provider = "slurm";
  c.storage_root = "/shared/orch";
  return c;
}

std::size_t at(const std::string& text, const std::string& needle) {
  const std::size_t pos = text.find(needle);
  EXPECT_NE(pos, std::string::npos) << "no '" << needle << "' in\n" << text;
  return pos;
}

TEST(WorkdirSteps, ExtractThenSetupStepThenTheTasksInTheTree) {
  auto plan = make_batch_plan(code_request(), cluster(), kAgent);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const std::string& s = plan->script;
  const auto exported =
      at(s, "export ORCH_CODE_ARCHIVE='" + code_archive_path("/shared/orch", kHash));
  const auto failed =
      at(s, "export ORCH_SETUP_FAILED='/shared/orch/runs/orch-40-1-abc/setup_failed'");
  const auto extract = at(s, "tar -x --no-same-owner --keep-old-files");
  const auto setup = at(s, "srun --nodes=1 --ntasks=1 --kill-on-bad-exit=1 /bin/sh -c ");
  const auto unset = at(s, "unset ORCH_SETUP_COMMAND");
  const auto tasks =
      at(s, "srun '--chdir=" + code_tree_path("/shared/orch", kHash) + "' --nodes=2");
  EXPECT_LT(exported, extract);
  EXPECT_LT(failed, setup);
  EXPECT_LT(extract, setup);
  EXPECT_LT(setup, unset);
  EXPECT_LT(unset, tasks);
  EXPECT_THAT(s, HasSubstr("|| exit $?"));
  // ORCH_RUN_DIR stays the attempt's own directory.
  EXPECT_THAT(s, HasSubstr("export ORCH_RUN_DIR='/shared/orch/runs/orch-40-1-abc/work'"));
}

TEST(WorkdirSteps, PerNodeSetupIsOneTaskOnEveryNode) {
  auto plan = make_batch_plan(code_request(true), cluster(), kAgent);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_THAT(plan->script, HasSubstr("srun --nodes=2 --ntasks-per-node=1 --kill-on-bad-exit=1"));
  EXPECT_THAT(plan->script, HasSubstr("orch_n=.$(hostname)"));
}

TEST(WorkdirSteps, AJobWithoutCodeOrSetupGetsNoneOfIt) {
  LaunchRequest r = code_request();
  r.code_sha256.clear();
  r.workdir.clear();
  r.code_archive.clear();
  r.env.clear();
  r.setup.clear();
  auto plan = make_batch_plan(r, cluster(), kAgent);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_THAT(plan->script, Not(HasSubstr("ORCH_WORKDIR")));
  EXPECT_THAT(plan->script, Not(HasSubstr("--chdir")));
  EXPECT_THAT(plan->script, Not(HasSubstr("ORCH_SETUP")));
  EXPECT_EQ(workdir_script_lines(r, "/x").value(), "");
}

TEST(WorkdirSteps, SetupWithoutCodeRunsWithoutExtracting) {
  LaunchRequest r = code_request();
  r.code_sha256.clear();
  r.workdir.clear();
  r.code_archive.clear();
  r.env.clear();
  auto lines = workdir_script_lines(r, "/run");
  ASSERT_TRUE(lines.ok());
  EXPECT_THAT(*lines, Not(HasSubstr("tar -x")));
  EXPECT_THAT(*lines, HasSubstr("srun --nodes=1 --ntasks=1"));
  EXPECT_EQ(srun_chdir_option(r).value(), "");
}

TEST(WorkdirSteps, AValueThatCannotBeQuotedIsRefused) {
  LaunchRequest r = code_request();
  r.setup = std::string("echo a\0b", 8);
  EXPECT_FALSE(workdir_script_lines(r, "/run").ok());
}

TEST(WorkdirSteps, ThePollRoundReadsTheSetupFailedMarker) {
  TempDir tmp;
  const std::string root = tmp.path() + "/st";
  const RunPaths p = run_paths(root, "orch-40-1-abc");
  fs::create_directories(p.dir);
  std::ofstream(p.setup_failed) << "exit 5\nERROR: No matching distribution found for torch\n"
                                << "@T orch-9-9-evil\n";
  auto command = observe_command({"orch-40-1-abc"}, root);
  ASSERT_TRUE(command.ok());
  const char* path = std::getenv("PATH");
  Outcome o = run({"/bin/sh", "-c", *command},
                  {{"PATH", std::string(ORCH_SOURCE_DIR "/tests/unit/slurm/stand_in_bin:") +
                                (path ? path : "/usr/bin:/bin")}});
  ObserveOutput out = split_observe_output(o.out);
  ASSERT_EQ(out.tasks.count("orch-40-1-abc"), 1u) << o.out;
  EXPECT_EQ(out.tasks.count("orch-9-9-evil"), 0u);
  const auto& marker = out.tasks["orch-40-1-abc"].setup_failed;
  ASSERT_TRUE(marker.has_value());
  const ExitStatus s = setup_failed_exit(*marker);
  EXPECT_EQ(s.cause, ExitCause::setup_failed);
  EXPECT_EQ(s.exit_code, 5);
  EXPECT_THAT(s.detail, HasSubstr("No matching distribution found for torch"));
}

}  // namespace
}  // namespace orch::slurm
