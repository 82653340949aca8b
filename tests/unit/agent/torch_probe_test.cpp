// The agent running the bundled torch probe (agents/torch_probe.h) with stand-in interpreters:
// shell scripts that check how they were called and print what a real run on GPUs would, or
// fail as a broken Python would. The real script on the CPU: torch_probe_cpu_test.cpp.

#include "agents/torch_probe.h"

#include <gmock/gmock.h>
#include <signal.h>
#include <sys/stat.h>

#include <cerrno>

#include "scheduler/model/probe_result.h"
#include "tests/unit/agent/agent_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class TorchProbeTest : public TempDirTest {
 protected:
  // An executable script in dir_/bin with `body` after the shebang.
  std::string script(const std::string& name, const std::string& body) {
    std::filesystem::create_directories(dir_ + "/bin");
    std::string path = dir_ + "/bin/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    chmod(path.c_str(), 0755);
    return path;
  }
  ProbeResult probe(const std::string& args) {
    int code =
        agent("probe --node n1 --dir " + dir_ +
              " --io-bytes 0 --compute-s 0.05 --nvidia-smi none --kernel-log /dev/null " + args);
    EXPECT_EQ(code, 0) << err();
    auto r = parse_probe_result(out());
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message) << "\n" << out();
    return r.ok() ? *r : ProbeResult{};
  }
  static const ProbeCheck* check(const ProbeResult& r, const std::string& name) {
    for (const ProbeCheck& c : r.checks) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }
};

// What a node of two GPUs would print, after a warning of the kind torch prints.
constexpr const char* kTwoGpus =
    R"({"version":"2.3.0","device":"cuda","dtype":"bfloat16","world":2,"gpus":[{"index":0,)"
    R"("name":"NVIDIA H100 80GB HBM3","tflops":712.5,"hbm_gb_s":2950.1,"n":8192},{"index":1,)"
    R"("name":"NVIDIA H100 80GB HBM3","tflops":698,"hbm_gb_s":2941,"n":8192}],)"
    R"("allreduce_busbw_gb_s":410.2,"allreduce_bytes":268435456,"seconds":12.3})";

TEST_F(TorchProbeTest, OnGpusTheTorchFiguresAreReportedAndComputeIsTheMedianGpu) {
  // The stand-in checks it was given the bundled script and the budget, and notes the path.
  std::string python = script("python",
                              "grep -q 'bundled PyTorch probe' \"$1\" || exit 9\n"
                              "[ \"$2\" = --seconds ] && [ \"$3\" = 7 ] || exit 8\n"
                              "echo \"$1\" > " +
                                  dir_ +
                                  "/script_path\n"
                                  "echo 'UserWarning: TypedStorage is deprecated'\n"
                                  "echo '" +
                                  std::string(kTwoGpus) + "'\n");
  ProbeResult r = probe("--torch-python " + python + " --torch-s 7");
  const ProbeCheck* c = check(r, "torch-probe");
  ASSERT_NE(c, nullptr) << r.raw;
  EXPECT_TRUE(c->ok) << c->detail;
  EXPECT_THAT(c->detail, HasSubstr("GEMM 698-712 TFLOPS"));
  EXPECT_EQ(r.compute_kind, "gpu-gemm");
  EXPECT_DOUBLE_EQ(*r.gemm_gflops, (712.5 + 698) / 2 * 1000);
  ASSERT_TRUE(r.torch.has_value());
  EXPECT_EQ(r.torch->device, "cuda");
  ASSERT_EQ(r.torch->gpus.size(), 2u);
  EXPECT_DOUBLE_EQ(*r.torch->gpus[1].tflops, 698);
  EXPECT_DOUBLE_EQ(*r.torch->gpus[0].hbm_gb_s, 2950.1);
  EXPECT_DOUBLE_EQ(*r.torch->allreduce_busbw_gb_s, 410.2);
  EXPECT_EQ(*r.torch->world, 2);
  // The script's private copy is gone, and so is its directory.
  std::string path = slurp(dir_ + "/script_path");
  path = path.substr(0, path.find('\n'));
  ASSERT_THAT(path, HasSubstr("/orch-torch-"));
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(path).parent_path()));
}

TEST_F(TorchProbeTest, WithoutTheFlagThereIsNoTorchProbe) {
  ProbeResult r = probe("");
  EXPECT_EQ(check(r, "torch-probe"), nullptr);
  EXPECT_FALSE(r.torch.has_value());
  EXPECT_EQ(r.compute_kind, "cpu-gemm");
}

TEST_F(TorchProbeTest, AnInterpreterWithoutTorchFailsTheCheckClearly) {
  // The real script under a Python that cannot see its site packages (where torch lives).
  std::string python = script("python-no-site", "exec /usr/bin/python3 -S \"$@\"\n");
  ProbeResult r = probe("--torch-python " + python);
  const ProbeCheck* c = check(r, "torch-probe");
  ASSERT_NE(c, nullptr) << r.raw;
  EXPECT_FALSE(c->ok);
  EXPECT_THAT(c->detail, HasSubstr("cannot import torch"));
  EXPECT_THAT(c->detail, HasSubstr("No module named 'torch'"));
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.torch.has_value() && !r.torch->gpus.empty());
}

TEST_F(TorchProbeTest, AnInterpreterThatCannotRunFailsTheCheck) {
  ProbeResult missing = probe("--torch-python " + dir_ + "/no/python");
  ASSERT_NE(check(missing, "torch-probe"), nullptr);
  EXPECT_FALSE(check(missing, "torch-probe")->ok);
  EXPECT_THAT(check(missing, "torch-probe")->detail,
              HasSubstr("cannot run " + dir_ + "/no/python"));
  ProbeResult not_in_path = probe("--torch-python no-such-python-here");
  EXPECT_EQ(check(not_in_path, "torch-probe")->detail,
            "no no-such-python-here in PATH to run the torch probe");
}

TEST_F(TorchProbeTest, AnInterpreterThatDiesWithoutALineFailsWithItsLastWords) {
  std::string python = script("python",
                              "echo 'Fatal Python error: Segmentation fault' >&2\n"
                              "exit 139\n");
  ProbeResult r = probe("--torch-python " + python);
  const ProbeCheck* c = check(r, "torch-probe");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->ok);
  EXPECT_THAT(c->detail, HasSubstr("(exit 139): the torch probe printed no result line: Fatal "
                                   "Python error: Segmentation fault"));
}

TEST_F(TorchProbeTest, TheDeadlineKillsTheInterpreterAndWhatItStarted) {
  // A stand-in that starts a process of its own (as the probe does one per GPU) and hangs.
  std::string python = script("python", "sleep 300 &\necho $! > " + dir_ + "/child\nsleep 300\n");
  auto started = std::chrono::steady_clock::now();
  agent::TorchProbe p = agent::run_torch_probe(python, 0.2, 0.5);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_FALSE(p.check.ok);
  EXPECT_THAT(p.check.detail, HasSubstr("did not finish the torch probe within 0.7 s"));
  pid_t child = std::stoi(slurp(dir_ + "/child"));
  EXPECT_TRUE(eventually([&] { return kill(child, 0) != 0 && errno == ESRCH; }))
      << "the interpreter's own child " << child << " outlived the deadline";
}

TEST_F(TorchProbeTest, BadTorchFlagsAreUsageErrors) {
  EXPECT_EQ(agent("probe --torch-s 0"), 2);
  EXPECT_THAT(err(), HasSubstr("bad value '0' for --torch-s"));
  EXPECT_EQ(agent("probe --torch-s soon"), 2);
  EXPECT_EQ(agent("probe --torch-s 4000"), 2);
  EXPECT_EQ(agent("probe --torch-python ''"), 2);
  EXPECT_EQ(agent("probe --torch-python"), 2);
  EXPECT_THAT(err(), HasSubstr("--torch-python needs a value"));
}

}  // namespace
}  // namespace orch::testing
