// The bundled torch probe for real (agents/torch_probe.py through orchestrate-agent) on this
// machine's CPU with Debian's python3-torch: float32 GEMM, memory copy and a gloo all-reduce
// between two local processes. It takes about as long as its budget (label integration);
// skipped where torch is not installed (make test-deps installs it).

#include <gmock/gmock.h>

#include "scheduler/health/burn_in.h"
#include "scheduler/model/probe_result.h"
#include "tests/unit/agent/agent_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kPython = "/usr/bin/python3";

bool have_torch() {
  return std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
}

class TorchProbeCpuTest : public TempDirTest {
 protected:
  // The probe of node `node` with the torch probe run by `python`; the parsed line.
  ProbeResult probe(const std::string& node, const std::string& python, double torch_s) {
    EXPECT_EQ(agent("probe --node " + node + " --dir " + dir_ +
                    " --io-bytes 0 --compute-s 0.05 --nvidia-smi none --kernel-log /dev/null"
                    " --torch-python " +
                    python + " --torch-s " + std::to_string(torch_s)),
              0)
        << err();
    auto r = parse_probe_result(out());
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message) << "\n" << out();
    return r.ok() ? *r : ProbeResult{};
  }
};

TEST_F(TorchProbeCpuTest, TheBundledScriptMeasuresTheCpuAndTheGlooAllReduce) {
  if (!have_torch()) GTEST_SKIP() << "PyTorch is not installed (Debian's python3-torch)";
  auto started = std::chrono::steady_clock::now();
  // 15 s: two processes each import torch before the all-reduce, seconds on a busy 2-core CI.
  ASSERT_EQ(agent("probe --node n1 --dir " + dir_ +
                  " --io-bytes 0 --compute-s 0.05 --nvidia-smi none --kernel-log /dev/null"
                  " --torch-python " +
                  kPython + " --torch-s 15"),
            0)
      << err();
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  auto r = parse_probe_result(out());
  ASSERT_TRUE(r.ok()) << r.error().message << "\n" << out();
  const ProbeCheck* c = nullptr;
  for (const ProbeCheck& k : r->checks) {
    if (k.name == "torch-probe") c = &k;
  }
  ASSERT_NE(c, nullptr) << r->raw;
  EXPECT_TRUE(c->ok) << c->detail;
  EXPECT_THAT(c->detail, HasSubstr("cpu float32, CPU: GEMM "));
  ASSERT_TRUE(r->torch.has_value()) << r->raw;
  EXPECT_EQ(r->torch->device, "cpu");
  EXPECT_EQ(r->torch->dtype, "float32");
  ASSERT_EQ(r->torch->gpus.size(), 1u);
  EXPECT_GT(r->torch->gpus[0].tflops.value_or(0), 0);
  EXPECT_GT(r->torch->gpus[0].hbm_gb_s.value_or(0), 0);
  EXPECT_GT(r->torch->allreduce_busbw_gb_s.value_or(0), 0);
  EXPECT_EQ(r->torch->world, 2);
  // The budget bounds it: 15 s to measure, and at most 45 s more to start its processes.
  EXPECT_LE(r->torch->seconds.value_or(1e9), 15 + 45.0);
  EXPECT_LT(took_s, 15 + 60.0);
  // On a CPU the node's compute figure stays the agent's own CPU GEMM.
  EXPECT_EQ(r->compute_kind, "cpu-gemm");
  std::cout << "torch probe on this CPU: " << c->detail << "\n";
}

TEST_F(TorchProbeCpuTest, TheLabsStandInInterpreterPlantsANodeAt55PercentAndBurnInNamesIt) {
  if (!have_torch()) GTEST_SKIP() << "PyTorch is not installed (Debian's python3-torch)";
  // The lab's copy of tests/lab/gpu with its faults file: n4 at 55%, every node's figures
  // fixed so that the machine's shared cores do not decide.
  const std::string lab = dir_ + "/gpu";
  std::filesystem::copy(ORCH_SOURCE_DIR "/tests/lab/gpu", lab);
  std::ofstream(lab + "/faults") << "# node fault value\n"
                                 << "n4   tflops_ratio     0.55\n"
                                 << "any  torch_tflops     0.05\n"
                                 << "any  torch_hbm_gb_s   20\n"
                                 << "any  torch_busbw_gb_s 1\n";
  ProbeResult n4 = probe("n4", lab + "/torch-python", 12);
  ASSERT_TRUE(n4.torch && n4.torch->gpus.size() == 1) << n4.raw;
  EXPECT_DOUBLE_EQ(*n4.torch->gpus[0].tflops, 0.0275);
  EXPECT_DOUBLE_EQ(*n4.torch->allreduce_busbw_gb_s, 1);
  ProbeResult n1 = probe("n1", lab + "/torch-python", 12);
  ASSERT_TRUE(n1.torch && n1.torch->gpus.size() == 1) << n1.raw;
  EXPECT_DOUBLE_EQ(*n1.torch->gpus[0].tflops, 0.05);
  ProbeResult n2 = n1;
  n2.node = "n2";
  // Median of 0.05, 0.05 and 0.0275 is 0.05; 0.0275 / 0.05 = 55%.
  auto verdicts = judge_burn_in({"n1", "n2", "n4"}, {n1, n2, n4}, BurnInPolicy{});
  EXPECT_TRUE(verdicts[0].passed) << verdicts[0].reason;
  EXPECT_FALSE(verdicts[2].passed);
  EXPECT_THAT(verdicts[2].reason, HasSubstr("cpu: 0.0275 TFLOPS, 55% of the median (0.05)"));
}

TEST_F(TorchProbeCpuTest, TheLabsStandInCanPlantAPythonWithoutTorch) {
  const std::string lab = dir_ + "/gpu";
  std::filesystem::copy(ORCH_SOURCE_DIR "/tests/lab/gpu", lab);
  std::ofstream(lab + "/faults") << "n3 torch_fail No_module_named_torch\n";
  ProbeResult n3 = probe("n3", lab + "/torch-python", 5);
  EXPECT_FALSE(n3.ok);
  bool found = false;
  for (const ProbeCheck& c : n3.checks) {
    if (c.name != "torch-probe") continue;
    found = true;
    EXPECT_FALSE(c.ok);
    EXPECT_EQ(c.detail, "No module named torch");
  }
  EXPECT_TRUE(found) << n3.raw;
}

}  // namespace
}  // namespace orch::testing
