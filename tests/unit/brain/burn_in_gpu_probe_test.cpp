// The GPU parts of a burn-in round (issue 43) as the brain asks for them, from the cluster's
// burn_in.gpu: the count to expect, DCGM, torch, and the time the round allows for them.

#include <gtest/gtest.h>

#include "scheduler/brain/health_judge.h"

namespace orch {
namespace {

ClusterSpec gpu_cluster() {
  ClusterSpec c;
  c.name = "alpha";
  c.gpus_per_node = 8;
  c.burn_in.timeout_s = 300;
  c.burn_in.gpu.configured = true;
  return c;
}

TEST(BurnInGpuProbe, AClusterWithoutTheSectionAsksForNoGpuPart) {
  ClusterSpec c = gpu_cluster();
  c.burn_in.gpu.configured = false;
  ProbeRequest req = burn_in_probe(c, "orch-burnin-alpha-1");
  EXPECT_EQ(req.gpu.expect_gpus, 0);
  EXPECT_TRUE(gpu_probe_args(req.gpu).empty());
  EXPECT_EQ(req.timeout_s, 300);
}

TEST(BurnInGpuProbe, TheSectionAsksEachNodeForTheGpusTheClusterPromises) {
  ProbeRequest req = burn_in_probe(gpu_cluster(), "orch-burnin-alpha-1");
  EXPECT_EQ(req.gpu.expect_gpus, 8);
  EXPECT_EQ(gpu_probe_args(req.gpu), (std::vector<std::string>{"--expect-gpus", "8"}));
}

TEST(BurnInGpuProbe, NoNvidiaSmiMeansNoCountToCheck) {
  ClusterSpec c = gpu_cluster();
  c.burn_in.gpu.nvidia_smi = "none";
  ProbeRequest req = burn_in_probe(c, "t");
  EXPECT_EQ(req.gpu.expect_gpus, 0);
  EXPECT_EQ(gpu_probe_args(req.gpu), (std::vector<std::string>{"--nvidia-smi", "none"}));
}

TEST(BurnInGpuProbe, DcgmAndTorchComeAlongAndTheRoundAllowsForThem) {
  ClusterSpec c = gpu_cluster();
  c.burn_in.gpu.dcgm_level = 2;
  c.burn_in.gpu.dcgmi = "/usr/bin/dcgmi";
  c.burn_in.gpu.torch_python = "python3";
  c.burn_in.gpu.torch_s = 20;
  ProbeRequest req = burn_in_probe(c, "t");
  EXPECT_EQ(
      gpu_probe_args(req.gpu),
      (std::vector<std::string>{"--expect-gpus", "8", "--dcgm", "/usr/bin/dcgmi", "--dcgm-level",
                                "2", "--torch-python", "python3", "--torch-s", "20"}));
  // 300 s of the round, 180 s for DCGM level 2, the torch budget and the 60 s the agent gives
  // its start before it kills it.
  EXPECT_EQ(req.timeout_s, 300 + 180 + 20 + 60);
}

}  // namespace
}  // namespace orch
