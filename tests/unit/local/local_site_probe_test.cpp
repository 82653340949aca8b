// LocalSite::probe_nodes against the real orchestrate-agent: one probe per virtual node, node
// names as the site's inventory gives them, refusals, outage, and the deadline.

#include <gmock/gmock.h>
#include <sys/stat.h>

#include <fstream>

#include "adapters/local/format_arg.h"
#include "adapters/process/run_captured.h"
#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

ProbeRequest small_probe(std::vector<std::string> nodes = {}) {
  ProbeRequest r;
  r.token = "burnin-1";
  r.nodes = std::move(nodes);
  r.io_bytes = 1 << 20;
  r.compute_s = 0.2;
  r.timeout_s = 60;
  return r;
}

TEST_F(LocalSiteTest, ProbeRunsOncePerNodeWithTheSitesNodeNames) {
  auto results = site_->probe_nodes(small_probe());
  ASSERT_TRUE(results.ok()) << results.error().message;
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].node, "loc-n0");
  EXPECT_EQ((*results)[1].node, "loc-n1");
  for (const ProbeResult& r : *results) {
    ASSERT_TRUE(r.gemm_gflops.has_value()) << r.raw;
    EXPECT_GT(*r.gemm_gflops, 0) << r.raw;
    EXPECT_TRUE(r.write_mb_s.has_value()) << r.raw;
    EXPECT_EQ(r.dir, root_ + "/probe") << r.raw;  // the default, created for the round
  }
  EXPECT_TRUE(std::filesystem::is_directory(root_ + "/probe"));
}

TEST_F(LocalSiteTest, ProbeOfNamedNodesOnlyAndInTheGivenDirectory) {
  const std::string dir = root_ + "/elsewhere";
  ProbeRequest r = small_probe({"loc-n1", "loc-n1"});  // a repeat is probed once
  r.dir = dir;
  auto results = site_->probe_nodes(r);
  ASSERT_TRUE(results.ok()) << results.error().message;
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].node, "loc-n1");
  EXPECT_EQ((*results)[0].dir, dir);
}

TEST_F(LocalSiteTest, TheRoundsGpuOptionsReachEachNodesProbeAndFaultsArePlantedPerNode) {
  // The lab's stand-in tools (tests/lab/gpu) with a fault on one virtual node: the agent hands
  // its --node to them as ORCH_NODE_NAME, so one faults file tells the nodes apart.
  const std::string gpu = root_ + "/gpu";
  std::filesystem::create_directories(gpu);
  for (const char* f : {"nvidia-smi", "dcgmi", "faults.sh"}) {
    std::filesystem::copy_file(std::string(ORCH_SOURCE_DIR) + "/tests/lab/gpu/" + f, gpu + "/" + f);
  }
  std::ofstream(gpu + "/faults") << "loc-n1 pcie_width 8\n";
  ProbeRequest r = small_probe();
  r.gpu.nvidia_smi = gpu + "/nvidia-smi";
  r.gpu.expect_gpus = 8;
  r.gpu.dcgm_level = 1;
  r.gpu.dcgmi = gpu + "/dcgmi";
  auto results = site_->probe_nodes(r);
  ASSERT_TRUE(results.ok()) << results.error().message;
  ASSERT_EQ(results->size(), 2u);
  auto check = [](const ProbeResult& p, const std::string& name) -> const ProbeCheck* {
    for (const ProbeCheck& c : p.checks) {
      if (c.name == name) return &c;
    }
    return nullptr;
  };
  for (const ProbeResult& p : *results) {
    EXPECT_EQ(p.gpu_count, 8) << p.raw;
    ASSERT_NE(check(p, "gpu-count"), nullptr) << p.raw;
    EXPECT_TRUE(check(p, "gpu-count")->ok);
    ASSERT_TRUE(p.dcgm) << p.raw;
    EXPECT_EQ(p.dcgm->level, 1);
  }
  EXPECT_TRUE(check((*results)[0], "gpu-pcie")->ok);
  EXPECT_FALSE(check((*results)[1], "gpu-pcie")->ok);
  EXPECT_EQ(check((*results)[1], "gpu-pcie")->detail, "GPU 0 (00000000:18:00.0): PCIe x8 of x16");
}

TEST_F(LocalSiteTest, ProbeRefusesUnknownNodesNamingThem) {
  auto results = site_->probe_nodes(small_probe({"loc-n0", "loc-n7", "other"}));
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.error().kind, ErrorKind::invalid);
  EXPECT_THAT(results.error().message, HasSubstr("loc-n7, other"));
  EXPECT_THAT(results.error().message, HasSubstr("loc-n0, loc-n1"));  // what it has
}

TEST_F(LocalSiteTest, ProbeDuringAnOutageIsUnreachable) {
  ASSERT_TRUE(site_->set_outage(true).ok());
  auto results = site_->probe_nodes(small_probe());
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.error().kind, ErrorKind::unreachable);
  ASSERT_TRUE(site_->set_outage(false).ok());
  EXPECT_TRUE(site_->probe_nodes(small_probe({"loc-n0"})).ok());
}

// A stand-in agent: prints a probe line for --node, except on `hang_node`, where it hangs.
std::string write_fake_agent(const std::string& root, const std::string& hang_node) {
  const std::string path = root + "/fake-agent";
  std::ofstream(path) << "#!/bin/sh\n"
                         "node=$3\n"
                         "if [ \"$node\" = '" +
                             hang_node +
                             "' ]; then sleep 30; fi\n"
                             "printf '{\"probe\":1,\"node\":\"%s\",\"hostname\":\"h\","
                             "\"at_ms\":1,\"ok\":true,\"checks\":[],\"compute\":{\"kind\":"
                             "\"cpu-gemm\",\"gflops\":1.5,\"n\":1,\"rounds\":1},\"io\":"
                             "{\"dir\":\"/d\",\"bytes\":0},\"gpus\":[],\"xid\":[]}\\n' "
                             "\"$node\"\n";
  chmod(path.c_str(), 0755);
  return path;
}

TEST_F(LocalSiteTest, AProbePastItsShareOfTheRoundIsKilledAndHasNoResult) {
  LocalSiteOptions o = site_->options();
  o.agent_path = write_fake_agent(root_, "loc-n0");
  LocalSite site(o);
  ProbeRequest r = small_probe();
  r.timeout_s = 2;  // loc-n0 gets 1 s of it, then the rest goes to loc-n1
  auto start = std::chrono::steady_clock::now();
  auto results = site.probe_nodes(r);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(results.ok()) << results.error().message;
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].node, "loc-n1");
  EXPECT_LT(took, 5.0);
}

TEST_F(LocalSiteTest, AnAgentWithoutProbeIsReported) {
  LocalSiteOptions o = site_->options();
  o.agent_path = root_ + "/old-agent";
  std::ofstream(o.agent_path) << "#!/bin/sh\necho \"orchestrate-agent: unknown command '$1'\" >&2\n"
                                 "exit 2\n";
  chmod(o.agent_path.c_str(), 0755);
  LocalSite site(o);
  auto results = site.probe_nodes(small_probe());
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.error().kind, ErrorKind::internal);
  EXPECT_THAT(results.error().message, HasSubstr("unknown command 'probe'"));
}

TEST(LocalRunCapture, KillsTheGroupAtTheDeadline) {
  auto run = process::run_captured({"/bin/sh", "-c", "echo started; sleep 30 & sleep 30"},
                                   {.timeout = std::chrono::milliseconds(300)});
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_TRUE(run->timed_out);
  EXPECT_EQ(run->out, "started\n");
  EXPECT_EQ(run->exit.signal, SIGKILL);
}

TEST(LocalRunCapture, KeepsOutputAndExitCode) {
  auto run = process::run_captured({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"},
                                   {.timeout = std::chrono::seconds(10)});
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_FALSE(run->timed_out);
  EXPECT_EQ(run->out, "out\n");
  EXPECT_EQ(run->err, "err\n");
  EXPECT_EQ(run->exit.exit_code, 3);
}

TEST(LocalRunCapture, FormatsNumbersShortly) {
  EXPECT_EQ(local::format_arg(600), "600");
  EXPECT_EQ(local::format_arg(0.2), "0.2");
}

}  // namespace
}  // namespace orch::testing
