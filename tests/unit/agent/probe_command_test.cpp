// `orchestrate-agent probe` end to end: the real binary with a fake nvidia-smi (a script the
// test writes, printing a fixture), a kernel log fixture and a temporary directory; its one
// line of output is read back with the scheduler's parser.

#include <gmock/gmock.h>
#include <sys/stat.h>

#include "scheduler/model/probe_result.h"
#include "tests/unit/agent/agent_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class ProbeCommandTest : public TempDirTest {
 protected:
  // A fake nvidia-smi that checks it was asked the right question, prints `fixture_name` and
  // exits with `code`.
  std::string fake_smi(const std::string& fixture_name, int code = 0) {
    std::string path = dir_ + "/bin/nvidia-smi";
    std::filesystem::create_directories(dir_ + "/bin");
    std::ofstream(path) << "#!/bin/sh\n"
                        << "case \"$1\" in --query-gpu=index,name,uuid,*) ;; *) exit 9 ;; esac\n"
                        << "[ \"$2\" = --format=csv,noheader,nounits ] || exit 9\n"
                        << "cat '" << kFixtures << "/" << fixture_name << "'\n"
                        << "exit " << code << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }
  // Runs the probe with quick settings plus `args`; the parsed line, or a test failure.
  ProbeResult probe(const std::string& args, const std::string& env = "") {
    std::string cmd = env + " " + kAgentPath + " probe --dir " + dir_ +
                      " --io-bytes 65536 --compute-s 0.05 " + args + " >" + dir_ + "/stdout 2>" +
                      dir_ + "/stderr";
    int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << err();
    std::string text = out();
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << "exactly one line: " << text;
    auto r = parse_probe_result(text);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message) << "\n" << text;
    return r.ok() ? *r : ProbeResult{};
  }
  static const ProbeCheck* check(const ProbeResult& r, const std::string& name) {
    for (const ProbeCheck& c : r.checks) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }
  static std::vector<std::string> names(const ProbeResult& r) {
    std::vector<std::string> out;
    for (const ProbeCheck& c : r.checks) out.push_back(c.name);
    return out;
  }
};

TEST_F(ProbeCommandTest, HealthyGpuNodeEndToEnd) {
  ProbeResult r = probe("--node alpha-n1 --nvidia-smi " + fake_smi("h100_healthy.csv") +
                        " --kernel-log " + kFixtures + "/kernel_benign_xid.log");
  EXPECT_TRUE(r.ok) << r.raw;
  EXPECT_EQ(names(r),
            (std::vector<std::string>{"nvidia-smi", "gpu-ecc", "gpu-retired-pages",
                                      "gpu-temperature", "xid", "fs-write", "fs-free", "compute"}));
  for (const ProbeCheck& c : r.checks) EXPECT_TRUE(c.ok) << c.name << ": " << c.detail;
  EXPECT_EQ(r.node, "alpha-n1");
  EXPECT_FALSE(r.hostname.empty());
  EXPECT_GT(r.at_ms, 1'600'000'000'000);
  EXPECT_EQ(r.compute_kind, "cpu-gemm");
  ASSERT_TRUE(r.gemm_gflops.has_value());
  EXPECT_GT(*r.gemm_gflops, 0);
  EXPECT_EQ(r.dir, std::filesystem::canonical(dir_).string());
  ASSERT_TRUE(r.write_mb_s && r.read_mb_s && r.free_bytes);
  EXPECT_GT(*r.write_mb_s, 0);
  EXPECT_GT(*r.free_bytes, 0);
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].uuid, "GPU-8c35f4c9-4dff-c9a2-866f-afb5d82e1dd7");
  EXPECT_EQ(r.gpus[0].temperature_c, 34);
  EXPECT_EQ(r.gpus[1].ecc_corrected, 2);
  EXPECT_FALSE(r.gpus[0].retired_pages_pending.has_value());  // [N/A] is left out
  EXPECT_THAT(r.raw, ::testing::Not(HasSubstr("retired_pages_dbe")));
  ASSERT_EQ(r.xid_lines.size(), 1u);
  EXPECT_THAT(r.xid_lines[0], HasSubstr("): 32,"));
  // The temporary file is gone.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_ + "/bin"), {}), 1);
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_THAT(e.path().filename().string(), ::testing::Not(HasSubstr(".orchestrate-probe")));
  }
}

TEST_F(ProbeCommandTest, FindsNvidiaSmiInPathAndFailsOnBadGpusAndXid) {
  fake_smi("a100_ecc_errors.csv");
  ProbeResult r = probe(std::string("--kernel-log ") + kFixtures + "/kernel_xid.log",
                        "PATH=" + dir_ + "/bin:$PATH");
  EXPECT_FALSE(r.ok);
  ASSERT_NE(check(r, "nvidia-smi"), nullptr);
  EXPECT_TRUE(check(r, "nvidia-smi")->ok);
  EXPECT_FALSE(check(r, "gpu-ecc")->ok);
  EXPECT_THAT(check(r, "gpu-ecc")->detail, HasSubstr("GPU 1"));
  EXPECT_FALSE(check(r, "xid")->ok);
  EXPECT_EQ(check(r, "xid")->detail, "Xid 13, 31, 79 in the kernel log (also 32)");
  EXPECT_EQ(r.xid_lines.size(), 4u);
  EXPECT_TRUE(check(r, "fs-write")->ok);
}

TEST_F(ProbeCommandTest, HotGpuWithPendingRetirement) {
  ProbeResult r = probe("--max-gpu-temp 90 --nvidia-smi " +
                        fake_smi("v100_hot_pending_retirement.csv") + " --kernel-log /dev/null");
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(check(r, "gpu-temperature")->ok);
  EXPECT_THAT(check(r, "gpu-temperature")->detail, HasSubstr("91 C > 90 C"));
  EXPECT_FALSE(check(r, "gpu-retired-pages")->ok);
  EXPECT_TRUE(check(r, "gpu-ecc")->ok);
  EXPECT_TRUE(check(r, "xid")->ok);
  EXPECT_EQ(r.gpus[0].retired_pages_dbe, 2);
  EXPECT_EQ(r.gpus[0].retired_pages_pending, true);
}

TEST_F(ProbeCommandTest, FailingNvidiaSmiFailsItsCheckButKeepsWhatItRead) {
  ProbeResult r = probe("--nvidia-smi " + fake_smi("lost_gpu.txt", 15) + " --kernel-log /dev/null");
  EXPECT_FALSE(r.ok);
  const ProbeCheck* smi = check(r, "nvidia-smi");
  ASSERT_NE(smi, nullptr);
  EXPECT_FALSE(smi->ok);
  EXPECT_THAT(smi->detail, HasSubstr("exit 15"));
  EXPECT_THAT(smi->detail, HasSubstr("Unable to determine the device handle for GPU1"));
  EXPECT_EQ(r.gpus.size(), 1u);
  EXPECT_NE(check(r, "gpu-ecc"), nullptr);
}

TEST_F(ProbeCommandTest, HangingNvidiaSmiIsKilledAtItsDeadline) {
  std::string smi = dir_ + "/slow-smi";
  std::ofstream(smi) << "#!/bin/sh\nexec sleep 30\n";
  chmod(smi.c_str(), 0755);
  auto t0 = std::chrono::steady_clock::now();
  ProbeResult r =
      probe("--nvidia-smi " + smi + " --nvidia-smi-timeout-s 0.3 --kernel-log /dev/null");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  ASSERT_NE(check(r, "nvidia-smi"), nullptr);
  EXPECT_FALSE(check(r, "nvidia-smi")->ok);
  EXPECT_THAT(check(r, "nvidia-smi")->detail, HasSubstr("did not answer within 0.3 s"));
}

TEST_F(ProbeCommandTest, ExplicitNvidiaSmiThatIsMissingFails) {
  ProbeResult r = probe("--nvidia-smi " + dir_ + "/nope --kernel-log /dev/null");
  EXPECT_FALSE(check(r, "nvidia-smi")->ok);
  EXPECT_THAT(check(r, "nvidia-smi")->detail, HasSubstr("No such file"));
  EXPECT_TRUE(r.gpus.empty());
}

TEST_F(ProbeCommandTest, NoNvidiaSmiMeansNoGpuChecks) {
  fake_smi("h100_healthy.csv");
  ProbeResult none = probe("--nvidia-smi none --kernel-log /dev/null", "PATH=" + dir_ + "/bin");
  EXPECT_TRUE(none.ok) << none.raw;
  EXPECT_EQ(check(none, "nvidia-smi"), nullptr);
  EXPECT_TRUE(none.gpus.empty());
  EXPECT_THAT(none.raw, HasSubstr(R"("gpus":[])"));
  ProbeResult absent = probe("--kernel-log /dev/null", "PATH=/nonexistent");
  EXPECT_EQ(names(absent), (std::vector<std::string>{"xid", "fs-write", "fs-free", "compute"}));
  EXPECT_EQ(absent.compute_kind, "cpu-gemm");
}

TEST_F(ProbeCommandTest, NodeNameComesFromSlurmThenOrchestrateThenHostname) {
  EXPECT_EQ(probe("--nvidia-smi none", "SLURMD_NODENAME=s1 ORCH_NODE_NAME=o1").node, "s1");
  EXPECT_EQ(probe("--nvidia-smi none", "SLURMD_NODENAME= ORCH_NODE_NAME=o1").node, "o1");
  ProbeResult r = probe("--nvidia-smi none", "env -u SLURMD_NODENAME -u ORCH_NODE_NAME");
  EXPECT_EQ(r.node, r.hostname);
}

TEST_F(ProbeCommandTest, FilesystemFailuresAreChecksNotCrashes) {
  ProbeResult r = probe("--nvidia-smi none --kernel-log /dev/null --dir " + dir_ + "/missing");
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(check(r, "fs-write")->ok);
  EXPECT_THAT(check(r, "fs-write")->detail, HasSubstr("No such file or directory"));
  EXPECT_FALSE(check(r, "fs-free")->ok);
  EXPECT_FALSE(r.free_bytes.has_value());

  ProbeResult full = probe("--nvidia-smi none --kernel-log /dev/null --min-free-bytes " +
                           std::to_string(1ll << 60));
  EXPECT_FALSE(check(full, "fs-free")->ok);
  EXPECT_THAT(check(full, "fs-free")->detail, HasSubstr("minimum 1024.0 PiB"));
  EXPECT_TRUE(check(full, "fs-write")->ok);

  ProbeResult quick = probe("--nvidia-smi none --kernel-log /dev/null --io-bytes 0 --compute-s 0");
  EXPECT_EQ(names(quick), (std::vector<std::string>{"xid", "fs-free"}));
  EXPECT_FALSE(quick.write_mb_s.has_value());
  EXPECT_FALSE(quick.gemm_gflops.has_value());
}

TEST_F(ProbeCommandTest, UnreadableKernelLogGivenExplicitlyFails) {
  ProbeResult r = probe("--nvidia-smi none --kernel-log " + dir_ + "/no-such-log");
  EXPECT_FALSE(check(r, "xid")->ok);
  EXPECT_THAT(check(r, "xid")->detail, HasSubstr("no-such-log"));
}

TEST_F(ProbeCommandTest, BadUsageExitsTwo) {
  for (const char* args :
       {"probe --io-bytes lots", "probe --compute-s -1", "probe --node", "probe --bogus 1",
        "probe --max-gpu-temp hot", "probe --dir ''", "probe --min-free-bytes 1.5"}) {
    EXPECT_EQ(agent(args), 2) << args;
    EXPECT_THAT(err(), HasSubstr("orchestrate-agent: probe:")) << args;
    EXPECT_EQ(out(), "") << args;
  }
}

}  // namespace
}  // namespace orch::testing
