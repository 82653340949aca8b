// The preflight's verdicts (scheduler/model/preflight.h): what a provider saw in, one check out,
// and the reason a misconfigured cluster gives its waiting jobs.
#include "scheduler/model/preflight.h"

#include <gmock/gmock.h>

namespace orch {
namespace {

using ::testing::HasSubstr;

CommandAnswer answered(std::string out) {
  return CommandAnswer{0, std::move(out), ""};
}
CommandAnswer refused(std::string err, int status = 1) {
  return CommandAnswer{status, "", std::move(err)};
}

TEST(preflight_partition, AConfiguredPartitionTheClusterListsPasses) {
  auto c = judge_partition("gpu", answered("debug*\ngpu\n"));
  EXPECT_TRUE(c.ok) << c.why;
  EXPECT_EQ(c.name, "partition");
}

TEST(preflight_partition, AnUnknownPartitionFailsNamingTheOnesThereAndTheKey) {
  auto c = judge_partition("gpux", answered("debug*\ngpu\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.why, HasSubstr("partition gpux does not exist"));
  EXPECT_THAT(c.why, HasSubstr("debug, gpu"));
  EXPECT_THAT(c.why, HasSubstr("slurm.partition"));
}

TEST(preflight_partition, NoneConfiguredPassesWithTheDefault) {
  EXPECT_TRUE(judge_partition("", answered("debug*\n")).ok);
}

TEST(preflight_partition, SinfoThatFailsFails) {
  auto c = judge_partition("gpu", refused("slurm_load_partitions: Unable to contact controller"));
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.why, HasSubstr("Unable to contact controller"));
}

TEST(preflight_association, AKnownAccountPassesAnUnknownOneFails) {
  EXPECT_TRUE(judge_association("account", "slurm.account", "ml", answered("ml\nroot\n")).ok);
  auto c = judge_association("account", "slurm.account", "mll", answered("ml\nroot\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.why, HasSubstr("account mll is not known"));
  EXPECT_THAT(c.why, HasSubstr("slurm.account"));
}

TEST(preflight_association, AClusterWithoutAccountingPassesSayingSo) {
  auto c = judge_association("qos", "slurm.qos", "high",
                             refused("sacctmgr: error: Problem talking to the database"));
  EXPECT_TRUE(c.ok);
  EXPECT_THAT(c.why, HasSubstr("keeps no accounting"));
  auto missing = judge_association("qos", "slurm.qos", "high", CommandAnswer{});
  EXPECT_TRUE(missing.ok);
}

TEST(preflight_association, NoneConfiguredPasses) {
  EXPECT_TRUE(judge_association("qos", "slurm.qos", "", refused("x")).ok);
}

TEST(preflight_rsync, FoundPassesMissingFailsSayingWhere) {
  EXPECT_TRUE(judge_rsync(answered("/usr/bin/rsync\n")).ok);
  auto c = judge_rsync(refused("", 127));
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.why, HasSubstr("rsync is not on the login node's PATH"));
}

TEST(preflight_storage, SaysWhereTheTestRan) {
  auto ok = judge_storage("/scratch/orch", "from a compute node", answered(""));
  EXPECT_TRUE(ok.ok);
  EXPECT_THAT(ok.why, HasSubstr("writable from a compute node"));
  auto bad = judge_storage("/scratch/orch", "from the login node", refused("Permission denied"));
  EXPECT_FALSE(bad.ok);
  EXPECT_THAT(bad.why, HasSubstr("/scratch/orch is not writable from the login node"));
  EXPECT_THAT(bad.why, HasSubstr("Permission denied"));
}

TEST(preflight_reason, NamesTheFirstFailureAndCountsTheRest) {
  std::vector<PreflightCheck> checks = {
      check_passed("port", "open"), check_failed("key-file", "cannot read /k"),
      check_skipped("ssh", "key-file"), check_failed("run-as", "no user x")};
  EXPECT_EQ(first_failure(checks)->name, "key-file");
  EXPECT_EQ(misconfigured_reason("alpha", checks),
            "cluster alpha misconfigured: key-file: cannot read /k (and 1 more failed check: "
            "orchestrate cluster check alpha)");
  EXPECT_EQ(misconfigured_reason("alpha", {check_passed("port", "open")}), "");
  EXPECT_EQ(misconfigured_reason("alpha", {}), "");
}

TEST(preflight_reason, OneLinePerCheck) {
  EXPECT_EQ(preflight_line(check_failed("key-file", "cannot read /k")),
            "key-file         FAILED  cannot read /k");
  EXPECT_EQ(preflight_line(check_skipped("ssh", "key-file")),
            "ssh              skipped not tried: key-file failed first");
}

TEST(preflight_judge, PyxisPassesWhenSrunTakesContainerImage) {
  const CommandAnswer help{0, "      --container-image=IMAGE [pyxis] ...\n", ""};
  EXPECT_TRUE(judge_container_runtime("pyxis", help).ok);
  const CommandAnswer plain{0, "Usage: srun [OPTIONS(0)...]\n", ""};
  PreflightCheck missing = judge_container_runtime("pyxis", plain);
  EXPECT_FALSE(missing.ok);
  EXPECT_EQ(missing.name, "containers");
  EXPECT_THAT(missing.why, HasSubstr("install pyxis"));
}

TEST(preflight_judge, ApptainerPassesWhenItAnswers) {
  EXPECT_TRUE(judge_container_runtime("apptainer", {0, "apptainer version 1.3.4\n", ""}).ok);
  PreflightCheck missing =
      judge_container_runtime("apptainer", {127, "", "sh: 1: apptainer: not found\n"});
  EXPECT_FALSE(missing.ok);
  EXPECT_THAT(missing.why, HasSubstr("apptainer: not found"));
}

}  // namespace
}  // namespace orch
