// A job's shell and Slurm shape on a real one-node lab cluster (issue 40, items 3 and 5; label
// slurm): under the default shell a command that sources a file runs (dash would answer
// "source: not found"), sbatch gets the job's CPUs per task, memory and --exclusive (the job's
// own environment shows SLURM_CPUS_PER_TASK and SLURM_MEM_PER_NODE, and scontrol the job's
// shape), and the site's inventory reports each node's CPUs and memory for placement.

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/slurm/slurm_site.h"
#include "testkit/slurm_lab.h"
#include "tests/integration/slurm_lab/site_run.h"

namespace orch::test {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

const std::string kAgent = ORCH_BIN_DIR "/orchestrate-agent";

class SlurmShapeLab : public LabSiteTest {
 protected:
  void SetUp() override { start_lab(1, kAgent); }

  // Launches and observes until the attempt ends (three minutes at most); its output lines.
  RunObservation run(const LaunchRequest& r, std::vector<std::string>& lines,
                     LaunchResult* launched_out = nullptr) {
    auto launched = site_->launch(r);
    EXPECT_TRUE(launched.ok()) << (launched.ok() ? "" : launched.error().message);
    if (launched.ok() && launched_out) *launched_out = *launched;
    return observe_until_exited(*site_, r.token, lines);
  }

  static LaunchRequest job(const std::string& token, const std::string& command) {
    LaunchRequest r;
    r.token = token;
    r.job_id = 41;
    r.attempt_no = 1;
    r.job_name = "shape";
    r.nodes = 1;
    r.gpus_per_node = 1;
    r.command = command;
    return r;
  }
};

TEST_F(SlurmShapeLab, AJobThatSourcesAFileRunsUnderTheDefaultShellWithItsShape) {
  LaunchRequest r = job("orch-41-1-shape",
                        "printf 'export GREETING=hello\\n' > env.sh && source ./env.sh && "
                        "echo \"greeting=$GREETING cpus=$SLURM_CPUS_PER_TASK "
                        "mem=$SLURM_MEM_PER_NODE\"");
  r.cpus_per_task = 4;
  r.memory_mb = 2048;
  r.slurm.exclusive = true;
  std::vector<std::string> lines;
  LaunchResult launched;
  RunObservation last = run(r, lines, &launched);
  ASSERT_EQ(last.phase, RunPhase::exited);
  ASSERT_TRUE(last.exit.has_value());
  EXPECT_EQ(last.exit->exit_code, 0) << ::testing::PrintToString(lines);
  EXPECT_THAT(lines, Contains("greeting=hello cpus=4 mem=2048"));
  EXPECT_THAT(launched.submit_command, HasSubstr("--cpus-per-task=4"));
  EXPECT_THAT(launched.submit_command, HasSubstr("--mem=2048M"));
  EXPECT_THAT(launched.submit_command, HasSubstr("--exclusive"));
  // Slurm's own record of the job's shape.
  auto shown = lab_->slurm("alpha", {"scontrol", "show", "job", last.site_job_id});
  ASSERT_TRUE(shown.ok()) << shown.error().message;
  EXPECT_THAT(*shown, HasSubstr("MinCPUsNode=4"));
  EXPECT_THAT(*shown, HasSubstr("MinMemoryNode=2G"));
  EXPECT_THAT(*shown, HasSubstr("OverSubscribe=NO"));  // --exclusive
}

TEST_F(SlurmShapeLab, ShellShIsDashWhereSourceIsNotFound) {
  LaunchRequest r = job("orch-41-2-sh", "printf 'x=1\\n' > env.sh && source ./env.sh");
  r.shell = "sh";
  std::vector<std::string> lines;
  RunObservation last = run(r, lines);
  ASSERT_EQ(last.phase, RunPhase::exited);
  ASSERT_TRUE(last.exit.has_value());
  EXPECT_EQ(last.exit->exit_code, 127) << ::testing::PrintToString(lines);
}

TEST_F(SlurmShapeLab, TheInventoryReportsEachNodesCpusAndMemory) {
  auto inv = site_->inventory();
  ASSERT_TRUE(inv.ok()) << inv.error().message;
  ASSERT_FALSE(inv->nodes.empty());
  for (const NodeInfo& n : inv->nodes) {
    EXPECT_EQ(n.cpus, 16) << n.name;          // the lab's CPUs= (LAB_CPUS)
    EXPECT_EQ(n.memory_mb, 64000) << n.name;  // its RealMemory= (LAB_MEM_MB)
  }
}

}  // namespace
}  // namespace orch::test
