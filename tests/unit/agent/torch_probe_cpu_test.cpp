// The bundled torch probe for real (agents/torch_probe.py through orchestrate-agent) on this
// machine's CPU with Debian's python3-torch: float32 GEMM, memory copy and a gloo all-reduce
// between two local processes. It takes about as long as its budget (label integration);
// skipped where torch is not installed (make test-deps installs it).

#include <gmock/gmock.h>

#include "scheduler/model/probe_result.h"
#include "tests/unit/agent/agent_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kPython = "/usr/bin/python3";

bool have_torch() {
  return std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
}

class TorchProbeCpuTest : public TempDirTest {};

TEST_F(TorchProbeCpuTest, TheBundledScriptMeasuresTheCpuAndTheGlooAllReduce) {
  if (!have_torch()) GTEST_SKIP() << "PyTorch is not installed (Debian's python3-torch)";
  auto started = std::chrono::steady_clock::now();
  // 15 s: two processes each import torch before the all-reduce, seconds on a busy 2-core CI.
  ASSERT_EQ(agent("probe --node n1 --dir " + dir_ +
                  " --io-bytes 0 --compute-s 0.05 --nvidia-smi none --kernel-log /dev/null"
                  " --torch-python " + kPython + " --torch-s 15"),
            0)
      << err();
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
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
  // The budget bounds it: 15 s, and the script reports its own time within it.
  EXPECT_LE(r->torch->seconds.value_or(1e9), 16.0);
  EXPECT_LT(took_s, 15 + 30.0);
  // On a CPU the node's compute figure stays the agent's own CPU GEMM.
  EXPECT_EQ(r->compute_kind, "cpu-gemm");
  std::cout << "torch probe on this CPU: " << c->detail << "\n";
}

}  // namespace
}  // namespace orch::testing
