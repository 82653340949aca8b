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
  // A fake nvidia-smi that checks it was asked for the XML report (-q -x), prints `before`, the
  // fixture `fixture_name` and exits with `code`.
  std::string fake_smi(const std::string& fixture_name, int code = 0,
                       const std::string& before = "") {
    std::string path = dir_ + "/bin/nvidia-smi";
    std::filesystem::create_directories(dir_ + "/bin");
    std::ofstream(path) << "#!/bin/sh\n"
                        << "[ \"$1 $2\" = '-q -x' ] || exit 9\n"
                        << (before.empty() ? "" : "echo '" + before + "'\n") << "cat '" << kFixtures
                        << "/" << fixture_name << "'\n"
                        << "exit " << code << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }
  // The lab's stand-in tools (tests/lab/gpu) copied to dir_/gpu with `faults` planted.
  std::string stand_ins(const std::string& faults) {
    std::string gpu = dir_ + "/gpu";
    std::filesystem::create_directories(gpu);
    for (const char* f : {"nvidia-smi", "dcgmi", "faults.sh"}) {
      std::filesystem::copy_file(std::string(ORCH_SOURCE_DIR) + "/tests/lab/gpu/" + f,
                                 gpu + "/" + f);
    }
    std::ofstream(gpu + "/faults") << faults;
    return gpu;
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
  ProbeResult r = probe("--node alpha-n1 --nvidia-smi " + fake_smi("a100_sxm4_mig.xml") +
                        " --kernel-log " + kFixtures + "/kernel_benign_xid.log");
  EXPECT_TRUE(r.ok) << r.raw;
  EXPECT_EQ(names(r),
            (std::vector<std::string>{"nvidia-smi", "gpu-ecc", "gpu-retired-pages",
                                      "gpu-temperature", "gpu-pcie", "gpu-remapped-rows",
                                      "gpu-throttle", "xid", "fs-write", "fs-free", "compute"}));
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
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpu_count, 1);
  EXPECT_EQ(r.gpus[0].uuid, "GPU-513536b6-7d19-9063-b049-1e69664bb298");
  EXPECT_EQ(r.gpus[0].temperature_c, 27);
  EXPECT_EQ(r.gpus[0].ecc_corrected, 0);
  EXPECT_EQ(r.gpus[0].pci_bus_id, "00000000:01:00.0");
  EXPECT_EQ(r.gpus[0].pcie_width_max, 16);
  EXPECT_EQ(r.gpus[0].power_w, 67.03);
  ASSERT_TRUE(r.gpus[0].throttle);
  EXPECT_TRUE(r.gpus[0].throttle->empty());
  EXPECT_FALSE(r.gpus[0].retired_pages_pending.has_value());  // N/A is left out
  EXPECT_THAT(r.raw, ::testing::Not(HasSubstr("retired_pages_dbe")));
  EXPECT_THAT(r.raw, ::testing::Not(HasSubstr("remapped_rows")));
  EXPECT_FALSE(r.dcgm);  // --dcgm defaults to none
  ASSERT_EQ(r.xid_lines.size(), 1u);
  EXPECT_THAT(r.xid_lines[0], HasSubstr("): 32,"));
  // The temporary file is gone.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_ + "/bin"), {}), 1);
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_THAT(e.path().filename().string(), ::testing::Not(HasSubstr(".orchestrate-probe")));
  }
}

TEST_F(ProbeCommandTest, FindsNvidiaSmiInPathAndFailsOnBadGpusAndXid) {
  std::string gpu = stand_ins("n3 ecc_uncorrected 3\n");
  ProbeResult r = probe(std::string("--kernel-log ") + kFixtures + "/kernel_xid.log",
                        "SLURMD_NODENAME=n3 PATH=" + gpu + ":$PATH");
  EXPECT_FALSE(r.ok);
  ASSERT_NE(check(r, "nvidia-smi"), nullptr);
  EXPECT_TRUE(check(r, "nvidia-smi")->ok);
  EXPECT_FALSE(check(r, "gpu-ecc")->ok);
  EXPECT_THAT(check(r, "gpu-ecc")->detail,
              HasSubstr("GPU 0 (" + r.gpus[0].uuid + "): 3 uncorrected ECC errors"));
  EXPECT_FALSE(check(r, "xid")->ok);
  EXPECT_EQ(check(r, "xid")->detail, "Xid 13, 31, 79 in the kernel log (also 32)");
  EXPECT_EQ(r.xid_lines.size(), 4u);
  EXPECT_TRUE(check(r, "fs-write")->ok);
}

TEST_F(ProbeCommandTest, HotGpuWithPendingRetirement) {
  // The layout of a page-retirement GPU's report (tesla_t4_pcie_x8.xml), hot and pending.
  std::string smi = dir_ + "/hot-smi";
  std::ofstream(smi) << "#!/bin/sh\ncat <<'EOF'\n<nvidia_smi_log><gpu id=\"00000000:86:00.0\">"
                     << "<product_name>Tesla V100-SXM2-16GB</product_name><retired_pages>"
                     << "<double_bit_retirement><retired_count>2</retired_count>"
                     << "</double_bit_retirement><pending_retirement>Yes</pending_retirement>"
                     << "</retired_pages><temperature><gpu_temp>91 C</gpu_temp></temperature>"
                     << "</gpu></nvidia_smi_log>\nEOF\n";
  chmod(smi.c_str(), 0755);
  ProbeResult r = probe("--max-gpu-temp 90 --nvidia-smi " + smi + " --kernel-log /dev/null");
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
  ProbeResult r = probe("--nvidia-smi " +
                        fake_smi("a100_sxm4_mig.xml", 15,
                                 "Unable to determine the device handle for GPU1: 0000:34:00.0: "
                                 "Unknown Error") +
                        " --kernel-log /dev/null");
  EXPECT_FALSE(r.ok);
  const ProbeCheck* smi = check(r, "nvidia-smi");
  ASSERT_NE(smi, nullptr);
  EXPECT_FALSE(smi->ok);
  EXPECT_THAT(smi->detail, HasSubstr("exit 15"));
  EXPECT_THAT(smi->detail, HasSubstr("Unable to determine the device handle for GPU1"));
  EXPECT_EQ(r.gpus.size(), 1u);
  EXPECT_NE(check(r, "gpu-ecc"), nullptr);
}

TEST_F(ProbeCommandTest, AHealthyStandInNodeOfEightH100sPassesEveryGpuCheckAndDcgm) {
  std::string gpu = stand_ins("");
  ProbeResult r = probe("--kernel-log /dev/null --expect-gpus 8 --nvidia-smi " + gpu +
                            "/nvidia-smi --dcgm " + gpu + "/dcgmi --dcgm-level 2",
                        "SLURMD_NODENAME=good");
  EXPECT_TRUE(r.ok) << r.raw;
  EXPECT_EQ(r.gpu_count, 8);
  EXPECT_EQ(check(r, "gpu-count")->detail, "8 GPUs of 8 expected");
  ASSERT_TRUE(r.dcgm);
  EXPECT_EQ(r.dcgm->level, 2);
  EXPECT_EQ(r.dcgm->tests.size(), 9u + 3 * 8);  // 9 node-wide software tests, 3 per GPU
  EXPECT_THAT(check(r, "dcgm")->detail, HasSubstr("dcgm diag -r 2: 33 results passed"));
  ASSERT_EQ(r.gpus.size(), 8u);
  EXPECT_EQ(r.gpus[7].pci_bus_id, "00000000:DB:00.0");
  EXPECT_EQ(r.gpus[7].pcie_gen, 5);
  EXPECT_EQ(r.gpus[7].ecc_uncorrected_aggregate, 0);
  EXPECT_EQ(r.gpus[7].remapped_rows_pending, false);
}

TEST_F(ProbeCommandTest, PlantedFaultsEachFailTheRightCheckWithTheReading) {
  std::string gpu = stand_ins(
      "alpha-n1 gpus_missing 1\nalpha-n2 pcie_width 8\nalpha-n3 ecc_uncorrected 3\n"
      "alpha-n4 dcgm_fail PCIe\nalpha-n5 nvlink_down 1\n");
  auto run = [&](const std::string& node) {
    return probe("--kernel-log /dev/null --expect-gpus 8 --nvidia-smi " + gpu +
                     "/nvidia-smi --dcgm " + gpu + "/dcgmi",
                 "SLURMD_NODENAME=" + node);
  };
  auto failed = [](const ProbeResult& r) {
    std::vector<std::string> out;
    for (const ProbeCheck& c : r.checks) {
      if (!c.ok) out.push_back(c.name + ": " + c.detail);
    }
    return out;
  };
  ProbeResult missing = run("alpha-n1");
  EXPECT_EQ(missing.gpu_count, 7);
  EXPECT_THAT(failed(missing), ::testing::ElementsAre("gpu-count: 7 GPUs of 8 expected"));
  ProbeResult narrow = run("alpha-n2");
  EXPECT_THAT(failed(narrow),
              ::testing::ElementsAre("gpu-pcie: GPU 0 (00000000:18:00.0): PCIe x8 of x16"));
  ProbeResult ecc = run("alpha-n3");
  ASSERT_EQ(failed(ecc).size(), 1u);
  EXPECT_THAT(failed(ecc)[0], HasSubstr("gpu-ecc: GPU 0 (GPU-"));
  EXPECT_THAT(failed(ecc)[0], HasSubstr("3 uncorrected ECC errors since the driver loaded"));
  ProbeResult links = run("alpha-n5");
  EXPECT_THAT(failed(links),
              ::testing::ElementsAre("gpu-nvlink: GPU 0: 17 of 18 NVLinks up (down: 17)"));
  EXPECT_EQ(links.gpus[0].nvlinks_down, 1);
  EXPECT_EQ(links.gpus[1].nvlinks_down, 0);
  ProbeResult diag = run("alpha-n4");
  ASSERT_EQ(failed(diag).size(), 1u);
  EXPECT_THAT(failed(diag)[0],
              HasSubstr("dcgm: dcgm diag -r 2: PCIe failed on GPU 0: GPU 0: Bandwidth of GPU 0"));
}

TEST_F(ProbeCommandTest, DcgmThatCannotRunFailsItsCheckAndAMissingDriverFailsTheCount) {
  ProbeResult r = probe("--nvidia-smi none --kernel-log /dev/null --dcgm " + dir_ + "/no-dcgmi");
  EXPECT_FALSE(check(r, "dcgm")->ok);
  EXPECT_THAT(check(r, "dcgm")->detail, HasSubstr("dcgm diag -r 2: "));
  EXPECT_THAT(check(r, "dcgm")->detail, HasSubstr("No such file"));
  ProbeResult no_path = probe("--kernel-log /dev/null --dcgm dcgmi", "PATH=/nonexistent");
  EXPECT_EQ(check(no_path, "dcgm")->detail, "dcgm diag -r 2: no dcgmi in PATH");
  ProbeResult no_driver = probe("--kernel-log /dev/null --expect-gpus 8", "PATH=/nonexistent");
  EXPECT_FALSE(check(no_driver, "gpu-count")->ok);
  EXPECT_EQ(check(no_driver, "gpu-count")->detail, "0 GPUs of 8 expected (no nvidia-smi in PATH)");
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
  fake_smi("a100_sxm4_mig.xml");
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
        "probe --max-gpu-temp hot", "probe --dir ''", "probe --min-free-bytes 1.5",
        "probe --expect-gpus -1", "probe --expect-gpus eight", "probe --dcgm-level 4",
        "probe --dcgm ''", "probe --dcgm-timeout-s soon"}) {
    EXPECT_EQ(agent(args), 2) << args;
    EXPECT_THAT(err(), HasSubstr("orchestrate-agent: probe:")) << args;
    EXPECT_EQ(out(), "") << args;
  }
}

}  // namespace
}  // namespace orch::testing
