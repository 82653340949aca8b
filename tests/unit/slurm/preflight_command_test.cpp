// The Slurm preflight's storage test (adapters/slurm/preflight_command.h): where it ran and what
// it found, read from its marks.
#include "adapters/slurm/preflight_command.h"

#include <gmock/gmock.h>

namespace orch::slurm {
namespace {

using ::testing::HasSubstr;

TEST(slurm_preflight, TheStorageTestRunsOnAComputeNodeWithTheClustersOptionsQuoted) {
  SlurmSpec s;
  s.partition = "gpu";
  s.account = "ml";
  auto cmd = storage_test_command("/scratch/it's", s, 20);
  ASSERT_TRUE(cmd.ok()) << cmd.error().message;
  EXPECT_THAT(*cmd, HasSubstr("srun"));
  EXPECT_THAT(*cmd, HasSubstr("--immediate=20"));
  EXPECT_THAT(*cmd, HasSubstr("--partition=gpu"));
  EXPECT_THAT(*cmd, HasSubstr("--account=ml"));
  EXPECT_THAT(*cmd, HasSubstr("'/scratch/it'\\''s'"));
}

TEST(slurm_preflight, AccountAndQosAreAskedForByNameQuoted) {
  EXPECT_EQ(accounts_command("ml team").value(),
            "'sacctmgr' '-nP' 'show' 'assoc' 'where' 'account=ml team' 'format=account'");
  EXPECT_EQ(qos_command("high").value(),
            "'sacctmgr' '-nP' 'show' 'qos' 'where' 'name=high' 'format=name'");
}

TEST(slurm_preflight, AComputeNodeThatWroteIsWritableFromThere) {
  auto c = storage_verdict("/s", CommandAnswer{0, std::string(kWritableMark) + "\n", ""});
  EXPECT_TRUE(c.ok);
  EXPECT_THAT(c.why, HasSubstr("from a compute node"));
}

TEST(slurm_preflight, WithoutSrunTheLoginNodeTestsAndTheCheckSaysSo) {
  auto c = storage_verdict("/s", CommandAnswer{0,
                                               std::string(kLoginNodeMark) +
                                                   "\nmkdir: Permission "
                                                   "denied\n" +
                                                   kNotWritableMark + "\n",
                                               "srun: error: Unable to allocate resources\n"});
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.why, HasSubstr("not writable from the login node"));
  EXPECT_THAT(c.why, HasSubstr("Unable to allocate resources"));
  EXPECT_THAT(c.why, HasSubstr("Permission denied"));
}

}  // namespace
}  // namespace orch::slurm
