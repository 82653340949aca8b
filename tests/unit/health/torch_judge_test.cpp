// Judging the PyTorch probe's figures (scheduler/health/torch_judge.h), alone and within a
// burn-in round (judge_burn_in), with hand-worked numbers.

#include "scheduler/health/torch_judge.h"

#include <gmock/gmock.h>

#include "scheduler/health/burn_in.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A node whose GPUs ran at these TFLOPS (copy 2950 GB/s each, all-reduce 410 GB/s).
ProbeResult node(const std::string& name, const std::vector<double>& tflops,
                 const std::string& device = "cuda") {
  ProbeResult r;
  r.node = name;
  r.at_ms = 1000;
  r.torch = TorchReading{};
  r.torch->device = device;
  r.torch->dtype = device == "cuda" ? "bfloat16" : "float32";
  for (std::size_t i = 0; i < tflops.size(); ++i) {
    r.torch->gpus.push_back({static_cast<int>(i), "", tflops[i], 2950});
  }
  r.torch->allreduce_busbw_gb_s = 410;
  r.torch->world = static_cast<std::int64_t>(tflops.size());
  return r;
}

std::vector<double> eight(double tflops) {
  return std::vector<double>(8, tflops);
}

TEST(TorchJudgeTest, AGpuAt55PercentOfTheMedianFailsWithItsReading) {
  // Four nodes of 8 GPUs at 710 TFLOPS, but node n4's GPU 3 at 390: the median of the 32 GPUs
  // is 710, and 390 / 710 = 54.9%, below 80%.
  std::vector<ProbeResult> round = {node("n1", eight(710)), node("n2", eight(710)),
                                    node("n3", eight(710)), node("n4", eight(710))};
  round[3].torch->gpus[3].tflops = 390;
  std::vector<const ProbeResult*> all;
  for (const auto& r : round) all.push_back(&r);
  TorchMedians m = torch_medians(all);
  EXPECT_DOUBLE_EQ(m.tflops.at("cuda"), 710);
  TorchVerdict v = judge_torch(*round[3].torch, m, TorchPolicy{});
  ASSERT_EQ(v.failures.size(), 1u);
  EXPECT_EQ(v.failures[0], "gpu 3: 390 TFLOPS, 55% of the median (710)");
  EXPECT_TRUE(judge_torch(*round[0].torch, m, TorchPolicy{}).failures.empty());
}

TEST(TorchJudgeTest, AWholeNodeAt55PercentFailsInItsBurnInRoundAndTheOthersPass) {
  // n3 runs every GPU at 0.55 x 700 = 385: 24 GPUs at 700 and 8 at 385, median 700.
  std::vector<ProbeResult> round = {node("n1", eight(700)), node("n2", eight(700)),
                                    node("n3", eight(385)), node("n4", eight(700))};
  auto verdicts = judge_burn_in({"n1", "n2", "n3", "n4"}, round, BurnInPolicy{});
  ASSERT_EQ(verdicts.size(), 4u);
  EXPECT_TRUE(verdicts[0].passed) << verdicts[0].reason;
  EXPECT_THAT(verdicts[0].reason, HasSubstr("torch cuda: 8 GPUs, GEMM 700 TFLOPS (median 700)"));
  EXPECT_FALSE(verdicts[2].passed);
  EXPECT_THAT(verdicts[2].reason, HasSubstr("gpu 0: 385 TFLOPS, 55% of the median (700)"));
  EXPECT_THAT(verdicts[2].reason, HasSubstr("gpu 7: 385 TFLOPS, 55% of the median (700)"));
  EXPECT_TRUE(verdicts[3].passed);
}

TEST(TorchJudgeTest, TheDatasheetPeakIsComparedOnCudaOnly) {
  // Every GPU alike at 400 TFLOPS: the median says nothing, the H100's 989 TFLOPS does:
  // 400 / 989 = 40.4%, below 50%.
  TorchPolicy p;
  p.peak_flops = 989e12;
  ProbeResult a = node("n1", eight(400)), b = node("n2", eight(400));
  TorchMedians m = torch_medians({&a, &b});
  TorchVerdict v = judge_torch(*a.torch, m, p);
  ASSERT_EQ(v.failures.size(), 8u);
  EXPECT_EQ(v.failures[0], "gpu 0: 400 TFLOPS, 40% of the datasheet peak (989)");
  // At 500 (50.6%) it passes.
  ProbeResult c = node("n1", eight(500));
  EXPECT_TRUE(judge_torch(*c.torch, torch_medians({&c}), p).failures.empty());
  // A CPU's float32 figure is never held against a GPU's datasheet.
  ProbeResult cpu = node("n1", {0.006}, "cpu");
  EXPECT_TRUE(judge_torch(*cpu.torch, torch_medians({&cpu}), p).failures.empty());
}

TEST(TorchJudgeTest, OnCpuTheFiguresAreComparedAcrossNodesAsCpu) {
  // The Slurm lab: one CPU figure per node; n2 scaled to 0.55 by the stand-in interpreter.
  // Median of {0.006, 0.0033, 0.006} = 0.006; 0.0033 / 0.006 = 55%.
  ProbeResult a = node("n1", {0.006}, "cpu"), b = node("n2", {0.0033}, "cpu"),
              c = node("n3", {0.006}, "cpu");
  auto verdicts = judge_burn_in({"n1", "n2", "n3"}, {a, b, c}, BurnInPolicy{});
  EXPECT_TRUE(verdicts[0].passed) << verdicts[0].reason;
  EXPECT_FALSE(verdicts[1].passed);
  EXPECT_THAT(verdicts[1].reason, HasSubstr("cpu: 0.0033 TFLOPS, 55% of the median (0.006)"));
}

TEST(TorchJudgeTest, CopyBandwidthAndAllReduceAreComparedWithTheirMedians) {
  // n2's GPU 5 copies at 1475 GB/s (50% of 2950); n3's all-reduce runs at 123 GB/s, 30% of
  // the median node's 410.
  ProbeResult a = node("n1", eight(700)), b = node("n2", eight(700)), c = node("n3", eight(700));
  b.torch->gpus[5].hbm_gb_s = 1475;
  c.torch->allreduce_busbw_gb_s = 123;
  TorchMedians m = torch_medians({&a, &b, &c});
  EXPECT_DOUBLE_EQ(m.hbm_gb_s.at("cuda"), 2950);
  EXPECT_DOUBLE_EQ(m.allreduce_gb_s.at("cuda"), 410);
  EXPECT_EQ(judge_torch(*b.torch, m, TorchPolicy{}).failures,
            std::vector<std::string>{"gpu 5: copy 1475 GB/s, 50% of the median (2950)"});
  EXPECT_EQ(judge_torch(*c.torch, m, TorchPolicy{}).failures,
            std::vector<std::string>{"all-reduce busbw: 123 GB/s, 30% of the median (410)"});
}

TEST(TorchJudgeTest, OneValueHasNoMedianToBeComparedWith) {
  ProbeResult cpu = node("n1", {0.006}, "cpu");
  TorchMedians m = torch_medians({&cpu});
  EXPECT_TRUE(m.tflops.empty());
  TorchVerdict v = judge_torch(*cpu.torch, m, TorchPolicy{});
  EXPECT_TRUE(v.failures.empty());
  EXPECT_EQ(v.figures, "torch cpu: GEMM 0.006 TFLOPS, copy 2950 GB/s, all-reduce busbw 410 GB/s");
}

TEST(TorchJudgeTest, NodesThatFailedTheirChecksDoNotSetTheMedian) {
  // n3 failed a check; its slow GPUs must not drag the median down for the others.
  ProbeResult a = node("n1", eight(700)), b = node("n2", eight(350)), c = node("n3", eight(100));
  c.ok = false;
  c.checks.push_back({"gpu-ecc", false, "GPU 0: 3 uncorrected"});
  auto verdicts = judge_burn_in({"n1", "n2", "n3"}, {a, b, c}, BurnInPolicy{});
  // Median of n1 and n2's 16 GPUs: (350 + 700) / 2 = 525; 350 / 525 = 67%.
  EXPECT_TRUE(verdicts[0].passed);
  EXPECT_THAT(verdicts[1].reason, HasSubstr("gpu 0: 350 TFLOPS, 67% of the median (525)"));
  EXPECT_THAT(verdicts[2].reason, HasSubstr("gpu-ecc"));
  EXPECT_THAT(verdicts[2].reason, HasSubstr("gpu 0: 100 TFLOPS, 19% of the median (525)"));
  EXPECT_THAT(verdicts[0].reason, Not(HasSubstr("median (100)")));
}

}  // namespace
}  // namespace orch
