// scheduler/model/job_shape.h (issue 40): memory sizes to MiB and back, the byte rules of a
// Slurm option's value, the job's options over the cluster's, and the shape surviving the
// outbox (a launch's JSON).
#include <gtest/gtest.h>

#include "scheduler/model/job_shape.h"
#include "scheduler/model/launch_request_json.h"

namespace orch {
namespace {

TEST(JobShape, MemorySizesReadInBinaryUnits) {
  EXPECT_EQ(parse_memory_mib("512M"), 512);
  EXPECT_EQ(parse_memory_mib("64G"), 64 * 1024);
  EXPECT_EQ(parse_memory_mib("64Gi"), 64 * 1024);
  EXPECT_EQ(parse_memory_mib("64GiB"), 64 * 1024);
  EXPECT_EQ(parse_memory_mib("1T"), 1024 * 1024);
  EXPECT_EQ(parse_memory_mib("1024T"), std::int64_t{1} << 30);
  for (const char* bad : {"", "64", "G", "0M", "-1G", "1.5G", "64g", "64 G", "1025T", "64GBB",
                          "99999999999999999999M"}) {
    EXPECT_EQ(parse_memory_mib(bad), std::nullopt) << bad;
  }
}

TEST(JobShape, MemoryTextIsTheShortestExactForm) {
  EXPECT_EQ(memory_mib_text(64 * 1024), "64G");
  EXPECT_EQ(memory_mib_text(1536), "1536M");
  EXPECT_EQ(memory_mib_text(2 * 1024 * 1024), "2T");
  for (std::int64_t mib : {1, 1023, 1024, 1536, 65536, 1 << 20, 3 << 20}) {
    EXPECT_EQ(parse_memory_mib(memory_mib_text(mib)), mib);
  }
}

TEST(JobShape, AnOptionValueMayNotBecomeAnotherOption) {
  EXPECT_EQ(slurm_option_problem("account", "proj-a_1.x"), "");
  EXPECT_EQ(slurm_option_problem("partition", "gpu,big"), "");
  EXPECT_EQ(slurm_option_problem("constraint", "[a100|h100]&ib*2"), "");
  EXPECT_NE(slurm_option_problem("account", "gpu,big"), "");  // ',' only in a partition list
  EXPECT_NE(slurm_option_problem("qos", "a&b"), "");          // operators only in constraint
  EXPECT_EQ(slurm_option_problem("constraint", "gpu --wrap=id"),
            "it holds a blank; sbatch --constraint takes letters, digits and '.', '_', '-', "
            "'&|[]*:,()!'");
  EXPECT_EQ(slurm_option_problem("account", "-A"),
            "it starts with '-', which sbatch would read as another option");
  EXPECT_EQ(slurm_option_problem("account", std::string("a\0b", 3)).substr(0, 19),
            "it holds a NUL byte");
  EXPECT_EQ(slurm_option_problem("account", "a\nb").substr(0, 18), "it holds a newline");
  EXPECT_EQ(slurm_option_problem("account", "caf\xc3\xa9").substr(0, 22), "it holds the byte 0xc3");
  EXPECT_EQ(slurm_option_problem("account", ""), "it is empty");
}

TEST(JobShape, TheJobsOptionsWinOverTheClusters) {
  SlurmJobOptions cluster{"gpu", "proj-a", "normal", "", "h100", true};
  SlurmJobOptions job;
  job.qos = "high";
  job.exclusive = false;
  const SlurmJobOptions m = merge_slurm_options(cluster, job);
  EXPECT_EQ(m.partition, "gpu");
  EXPECT_EQ(m.qos, "high");
  EXPECT_EQ(m.constraint, "h100");
  EXPECT_EQ(m.exclusive, std::optional<bool>(false));
}

TEST(JobShape, TheShapeSurvivesTheOutbox) {
  LaunchRequest r;
  r.token = "orch-1-1-a";
  r.job_name = "shape";
  r.command = "exec python train.py";
  r.shell = "bash-login";
  r.cpus_per_task = 12;
  r.memory_mb = 64 * 1024;
  r.slurm.account = "proj-a";
  r.slurm.constraint = "a100&ib";
  r.slurm.exclusive = false;
  auto back = launch_request_from_json(launch_request_to_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->shell, "bash-login");
  EXPECT_EQ(back->cpus_per_task, 12);
  EXPECT_EQ(back->memory_mb, 64 * 1024);
  EXPECT_EQ(back->slurm, r.slurm);
  // A launch written before issue 40 has none of them: the defaults.
  auto old = launch_request_to_json(LaunchRequest{});
  EXPECT_FALSE(old.contains("shell"));
  EXPECT_FALSE(old.contains("slurm"));
  auto plain = launch_request_from_json(old);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->shell, "");
  EXPECT_TRUE(plain->slurm.empty());
}

}  // namespace
}  // namespace orch
