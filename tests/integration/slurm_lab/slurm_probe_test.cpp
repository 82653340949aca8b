// SlurmSite::probe_nodes on a real 3-node lab cluster (label slurm): the agent is shipped once,
// one srun job probes every node, and a node made slow (its tasks at niceness 19 while busy
// loops keep the CPUs full: tests/lab/slurm/ctl.sh renice-node and hog) measures far fewer
// GFLOP/s than the others. Also the refusals, a DOWN node, and launch's submit_command.
// One lab for the whole suite (bringing one up takes seconds); each test leaves it healthy.

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/slurm/slurm_site.h"
#include "testkit/slurm_lab.h"
#include "tests/integration/slurm_lab/site_run.h"

namespace orch::test {
namespace {

using ::testing::HasSubstr;

const std::string kAgent = ORCH_BIN_DIR "/orchestrate-agent";

class SlurmProbeTest : public LabPerSuiteTest<3> {
 protected:
  void SetUp() override {
    LabPerSuiteTest::SetUp();
    if (HasFatalFailure()) return;
    ClusterSpec spec = lab_->cluster_spec("alpha");
    spec.ssh.connect_timeout_s = 10;
    spec.ssh.command_timeout_s = 30;
    site_ = std::make_unique<SlurmSite>(spec, std::make_unique<SshSession>(spec.name, spec.ssh),
                                        SlurmSiteOptions{kAgent});
  }

  static ProbeRequest request(const std::string& token, std::vector<std::string> nodes = {}) {
    ProbeRequest r;
    r.token = token;
    r.nodes = std::move(nodes);
    r.io_bytes = 4 << 20;
    r.compute_s = 1.0;
    r.timeout_s = 90;
    return r;
  }

  // node -> result, checking that no node answered twice.
  static std::map<std::string, ProbeResult> by_node(const std::vector<ProbeResult>& results) {
    std::map<std::string, ProbeResult> m;
    for (const ProbeResult& r : results) EXPECT_TRUE(m.emplace(r.node, r).second) << r.node;
    return m;
  }

  std::unique_ptr<SlurmSite> site_;
};

TEST_F(SlurmProbeTest, EveryNodeAnswersAndASlowNodeMeasuresSlow) {
  const std::string storage = lab_->cluster("alpha").storage_root;
  auto started = std::chrono::steady_clock::now();
  auto seconds = [&] {
    auto now = std::chrono::steady_clock::now();
    double s = std::chrono::duration<double>(now - started).count();
    started = now;
    return s;
  };
  auto first = site_->probe_nodes(request("burnin-alpha-1"));
  std::cout << "first round (with the upload): " << seconds() << " s\n";
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto nodes = by_node(*first);
  ASSERT_EQ(nodes.size(), 3u);
  for (const char* name : {"alpha-n1", "alpha-n2", "alpha-n3"}) {
    ASSERT_TRUE(nodes.count(name)) << name;
    const ProbeResult& r = nodes.at(name);
    EXPECT_GT(r.gemm_gflops.value_or(0), 0) << r.raw;
    EXPECT_GT(r.write_mb_s.value_or(0), 0) << r.raw;
    EXPECT_GT(r.read_mb_s.value_or(0), 0) << r.raw;
    EXPECT_EQ(r.dir, storage + "/probe") << r.raw;  // the default without a checkpoint root
  }

  // The agent went to <storage>/bin under its content id, executable; a second round finds it
  // and does not upload it again.
  std::vector<std::string> shipped;
  for (const auto& e : std::filesystem::directory_iterator(storage + "/bin")) {
    shipped.push_back(e.path().string());
  }
  ASSERT_EQ(shipped.size(), 1u);
  EXPECT_THAT(shipped[0], ::testing::MatchesRegex(".*/orchestrate-agent-[0-9a-f]{16}"));
  struct stat before {};
  ASSERT_EQ(stat(shipped[0].c_str(), &before), 0);
  EXPECT_EQ(before.st_mode & 0777, 0755u);
  EXPECT_EQ(static_cast<std::uintmax_t>(before.st_size), std::filesystem::file_size(kAgent));

  // alpha-n2's tasks at niceness 19 while one busy loop per CPU runs at niceness 0.
  ASSERT_TRUE(lab_->renice_node("alpha", "alpha-n2", 19).ok());
  ASSERT_TRUE(lab_->start_cpu_hog(120).ok());
  seconds();
  auto slow = site_->probe_nodes(request("burnin-alpha-2"));
  std::cout << "second round (under the hog): " << seconds() << " s\n";
  auto stopped = lab_->stop_cpu_hog();
  auto undone = lab_->renice_node("alpha", "alpha-n2", 0);
  ASSERT_TRUE(slow.ok()) << slow.error().message;
  EXPECT_TRUE(stopped.ok()) << stopped.error().message;
  EXPECT_TRUE(undone.ok()) << undone.error().message;
  nodes = by_node(*slow);
  ASSERT_EQ(nodes.size(), 3u);
  std::vector<double> others = {nodes["alpha-n1"].gemm_gflops.value_or(0),
                                nodes["alpha-n3"].gemm_gflops.value_or(0)};
  double median = (others[0] + others[1]) / 2;  // the median of two
  double n2 = nodes["alpha-n2"].gemm_gflops.value_or(0);
  std::cout << "GFLOP/s under the hog: alpha-n1 " << others[0] << ", alpha-n3 " << others[1]
            << ", alpha-n2 (nice 19) " << n2 << ": ratio " << (median > 0 ? n2 / median : 0)
            << "\n";
  EXPECT_GT(n2, 0);
  EXPECT_LT(n2, 0.5 * median);

  struct stat after {};
  ASSERT_EQ(stat(shipped[0].c_str(), &after), 0);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

TEST_F(SlurmProbeTest, NamedNodesOnlyInTheGivenDirectory) {
  const std::string dir = lab_->cluster("alpha").storage_root + "/fast disk";
  ProbeRequest r = request("burnin-alpha-3", {"alpha-n3", "alpha-n1"});
  r.dir = dir;
  r.compute_s = 0.2;
  auto results = site_->probe_nodes(r);
  ASSERT_TRUE(results.ok()) << results.error().message;
  auto nodes = by_node(*results);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_TRUE(nodes.count("alpha-n1") && nodes.count("alpha-n3"));
  EXPECT_EQ(nodes["alpha-n1"].dir, dir);
}

TEST_F(SlurmProbeTest, UnknownNodesAndBadTokensAreRefused) {
  auto unknown = site_->probe_nodes(request("burnin-alpha-4", {"alpha-n1", "alpha-n9"}));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::invalid);
  EXPECT_THAT(unknown.error().message, HasSubstr("alpha-n9"));

  auto bad = site_->probe_nodes(request("bad token"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid);
}

TEST_F(SlurmProbeTest, ADownNodeIsNotProbedAndHasNoResult) {
  ASSERT_TRUE(lab_->set_node_down("alpha", "alpha-n3", "probe test").ok());
  auto results = site_->probe_nodes(request("burnin-alpha-5"));
  auto only_down = site_->probe_nodes(request("burnin-alpha-6", {"alpha-n3"}));
  ASSERT_TRUE(lab_->resume_node("alpha", "alpha-n3").ok());
  ASSERT_TRUE(results.ok()) << results.error().message;
  auto nodes = by_node(*results);
  EXPECT_EQ(nodes.size(), 2u);
  EXPECT_FALSE(nodes.count("alpha-n3"));
  ASSERT_FALSE(only_down.ok());
  EXPECT_EQ(only_down.error().kind, ErrorKind::io);
  EXPECT_THAT(only_down.error().message, HasSubstr("alpha-n3 (down: probe test)"));
}

TEST_F(SlurmProbeTest, ARoundThatCannotStartEndsInTimeAndLeavesNoJob) {
  // Every CPU of alpha-n1 taken: the probe's job pends until the round's time is up.
  const std::string storage = lab_->cluster("alpha").storage_root;
  LabCommand blocker =
      lab_->ssh("alpha",
                "sbatch --parsable --exclusive --nodelist=alpha-n1 --job-name=blocker "
                "--chdir=" +
                    storage + " --output=/dev/null --wrap 'sleep 120'");
  ASSERT_EQ(blocker.exit_code, 0) << blocker.err;
  ProbeRequest r = request("burnin-alpha-8", {"alpha-n1"});
  r.timeout_s = 8;
  auto start = std::chrono::steady_clock::now();
  auto results = site_->probe_nodes(r);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto left = lab_->slurm("alpha", {"squeue", "-h", "--name=burnin-alpha-8", "-o", "%i %T"});
  (void)lab_->slurm("alpha", {"scancel", "--name=blocker"});
  ASSERT_FALSE(results.ok());
  std::cout << "pending round: " << results.error().message
            << "\nits job: " << (left.ok() ? *left : left.error().message) << "\n";
  EXPECT_EQ(results.error().kind, ErrorKind::io) << results.error().message;
  EXPECT_THAT(results.error().message, HasSubstr("did not finish within 8 s"));
  EXPECT_LT(took, 8.5);
  ASSERT_TRUE(left.ok()) << left.error().message;
  EXPECT_THAT(*left, ::testing::Not(HasSubstr("PENDING")));
  EXPECT_THAT(*left, ::testing::Not(HasSubstr("RUNNING")));
}

TEST_F(SlurmProbeTest, AMissingAgentIsAnError) {
  ClusterSpec spec = lab_->cluster_spec("alpha");
  SlurmSite site(spec, std::make_unique<SshSession>(spec.name, spec.ssh),
                 SlurmSiteOptions{"/nonexistent/orchestrate-agent"});
  auto results = site.probe_nodes(request("burnin-alpha-7"));
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.error().kind, ErrorKind::misconfigured);
  EXPECT_THAT(results.error().message, HasSubstr("build orchestrate-agent"));
}

TEST_F(SlurmProbeTest, LaunchReportsTheSbatchCommandLineAsSent) {
  LaunchRequest r;
  r.token = "orch-9-1-probe";
  r.job_id = 9;
  r.attempt_no = 1;
  r.job_name = "submit line";
  r.command = "true";
  r.nodes = 1;
  r.gpus_per_node = 1;
  r.exclude_nodes = {"alpha-n2"};
  auto launched = site_->launch(r);
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  EXPECT_THAT(launched->submit_command, ::testing::StartsWith("'sbatch' '--parsable'"));
  EXPECT_THAT(launched->submit_command, HasSubstr("'--exclude=alpha-n2'"));
  EXPECT_THAT(launched->submit_command, HasSubstr("/runs/orch-9-1-probe/job.sh'"));
  (void)site_->cancel(r.token);
}

}  // namespace
}  // namespace orch::test
