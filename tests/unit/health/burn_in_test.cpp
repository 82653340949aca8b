// Judging a burn-in round: checks first, then each node against the cluster's median.
#include "scheduler/health/burn_in.h"

#include <gmock/gmock.h>

namespace orch {
namespace {

using ::testing::HasSubstr;

ProbeResult probe(std::string node, double gflops, std::optional<double> write = std::nullopt,
                  std::optional<double> read = std::nullopt) {
  ProbeResult r;
  r.node = std::move(node);
  r.gemm_gflops = gflops;
  r.write_mb_s = write;
  r.read_mb_s = read;
  r.checks = {{"compute", true, ""}, {"fs-write", true, ""}};
  return r;
}

TEST(BurnIn, NodeAtHalfTheMedianComputeFailsAndOneAtNinetyFivePercentPasses) {
  std::vector<ProbeResult> results = {probe("n1", 100), probe("n2", 100), probe("n3", 95),
                                      probe("n4", 50), probe("n5", 100)};
  auto v = judge_burn_in({"n1", "n2", "n3", "n4", "n5"}, results, {});
  ASSERT_EQ(v.size(), 5u);
  // Median of 100, 100, 95, 50, 100 is 100.
  EXPECT_TRUE(v[2].passed) << v[2].reason;
  EXPECT_DOUBLE_EQ(v[2].compute_ratio, 0.95);
  EXPECT_EQ(v[2].reason, "checks passed; compute 95% of the cluster median (95 vs 100 GFLOP/s)");
  EXPECT_FALSE(v[3].passed);
  EXPECT_DOUBLE_EQ(v[3].compute_ratio, 0.5);
  EXPECT_EQ(v[3].reason, "compute 50% of the cluster median (50 vs 100 GFLOP/s)");
  EXPECT_TRUE(v[0].passed);
}

TEST(BurnIn, SlowFilesystemFailsOnTheSlowerOfWriteAndRead) {
  std::vector<ProbeResult> results = {probe("a", 10, 800, 1000), probe("b", 10, 1000, 900),
                                      probe("c", 10, 1000, 300)};
  auto v = judge_burn_in({"a", "b", "c"}, results, {});
  // io figures: 800, 900, 300; median 800.
  EXPECT_TRUE(v[0].passed);
  EXPECT_DOUBLE_EQ(v[0].io_ratio, 1.0);
  EXPECT_TRUE(v[1].passed);
  EXPECT_FALSE(v[2].passed);
  EXPECT_EQ(v[2].reason, "io 38% of the cluster median (300 vs 800 MB/s)");
}

TEST(BurnIn, FailingCheckFailsAndIsNamedWithItsDetail) {
  std::vector<ProbeResult> results = {probe("a", 10), probe("b", 10), probe("c", 10)};
  results[1].ok = false;
  results[1].checks.push_back({"gpu-ecc", false, "3 uncorrectable errors on GPU 2"});
  results[1].checks.push_back({"xid", false, ""});
  auto v = judge_burn_in({"a", "b", "c"}, results, {});
  EXPECT_TRUE(v[0].passed);
  EXPECT_FALSE(v[1].passed);
  EXPECT_THAT(v[1].reason,
              HasSubstr("failed checks: gpu-ecc (3 uncorrectable errors on GPU 2), xid"));
  // A result marked failed without a failed check still fails.
  results[2].ok = false;
  v = judge_burn_in({"a", "b", "c"}, results, {});
  EXPECT_FALSE(v[2].passed);
  EXPECT_THAT(v[2].reason, HasSubstr("probe reported a failure"));
}

TEST(BurnIn, FailedNodesDoNotDragTheMedianDown) {
  // b fails its checks and is slow; the median is over a and c only (100), so c at 92 passes.
  std::vector<ProbeResult> results = {probe("a", 100), probe("b", 1), probe("c", 92)};
  results[1].checks[0].ok = false;
  auto v = judge_burn_in({"a", "b", "c"}, results, {});
  EXPECT_TRUE(v[2].passed) << v[2].reason;
  EXPECT_NEAR(v[2].compute_ratio, 92.0 / 96.0, 1e-12);
}

TEST(BurnIn, MissingResultFails) {
  auto v = judge_burn_in({"a", "b", "ghost"}, {probe("a", 10), probe("b", 10)}, {});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_FALSE(v[2].passed);
  EXPECT_EQ(v[2].node, "ghost");
  EXPECT_EQ(v[2].reason, "no probe result");
  EXPECT_EQ(v[2].compute_ratio, 0);
}

TEST(BurnIn, SingleNodeIsJudgedOnItsChecksOnly) {
  auto v = judge_burn_in({"solo"}, {probe("solo", 3.5, 120, 150)}, {});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(v[0].passed);
  EXPECT_EQ(v[0].compute_ratio, 0);
  EXPECT_EQ(v[0].reason,
            "checks passed; compute 3.5 GFLOP/s (no other node to compare); io 120 MB/s (no "
            "other node to compare)");
  ProbeResult bad = probe("solo", 3.5);
  bad.checks[1] = {"fs-write", false, "read-only filesystem"};
  v = judge_burn_in({"solo"}, {bad}, {});
  EXPECT_FALSE(v[0].passed);
  EXPECT_EQ(v[0].reason, "failed checks: fs-write (read-only filesystem)");
}

TEST(BurnIn, NewestResultOfANodeCounts) {
  ProbeResult old = probe("a", 1);
  old.at_ms = 1;
  ProbeResult fresh = probe("a", 100);
  fresh.at_ms = 2;
  auto v = judge_burn_in({"a", "b"}, {fresh, old, probe("b", 100)}, {});
  EXPECT_TRUE(v[0].passed) << v[0].reason;
}

TEST(BurnIn, EachFailedGpuCheckFailsItsNodeWithTheReadingInTheReason) {
  // The checks of issue 43's planted faults, as the agent words them (agents/gpu_checks.h).
  std::vector<ProbeResult> results = {probe("missing", 100), probe("narrow", 100),
                                      probe("ecc", 100), probe("dcgm", 100), probe("good", 100)};
  results[0].checks.push_back({"gpu-count", false, "7 GPUs of 8 expected"});
  results[1].checks.push_back({"gpu-pcie", false, "GPU 0 (00000000:18:00.0): PCIe x8 of x16"});
  results[2].checks.push_back(
      {"gpu-ecc", false, "GPU 0 (GPU-ea36): 3 uncorrected ECC errors since the driver loaded"});
  results[3].checks.push_back({"dcgm", false, "dcgm diag -r 2: PCIe failed on GPU 0: slow"});
  results[4].checks.push_back({"gpu-count", true, "8 GPUs of 8 expected"});
  auto v = judge_burn_in({"missing", "narrow", "ecc", "dcgm", "good"}, results, {});
  ASSERT_EQ(v.size(), 5u);
  EXPECT_FALSE(v[0].passed);
  EXPECT_THAT(v[0].reason, HasSubstr("gpu-count (7 GPUs of 8 expected)"));
  EXPECT_THAT(v[1].reason, HasSubstr("gpu-pcie (GPU 0 (00000000:18:00.0): PCIe x8 of x16)"));
  EXPECT_THAT(v[2].reason, HasSubstr("gpu-ecc (GPU 0 (GPU-ea36): 3 uncorrected ECC errors"));
  EXPECT_THAT(v[3].reason, HasSubstr("dcgm (dcgm diag -r 2: PCIe failed on GPU 0: slow)"));
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(v[i].passed) << v[i].node;
  EXPECT_TRUE(v[4].passed) << v[4].reason;
}

}  // namespace
}  // namespace orch
