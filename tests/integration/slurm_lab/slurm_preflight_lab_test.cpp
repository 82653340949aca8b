// `orchestrate cluster check` on a real lab cluster (label slurm, issue 40): SlurmSite::preflight
// names each planted fault in one line of its own (a closed port, a missing key file, an unknown
// partition, a read-only storage root, no rsync on the login node's PATH), and a cluster
// configured right passes every check, the agent uploaded and run, storage written from a node.
// One lab for the suite; each fault is planted in the spec or the ssh user's shell start-up.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/slurm/slurm_site.h"
#include "testkit/slurm_lab.h"
#include "tests/integration/slurm_lab/site_run.h"

namespace orch::test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kAgent = ORCH_BIN_DIR "/orchestrate-agent";

// A TCP port nothing listens on (bound, then closed).
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  ::close(fd);
  return ntohs(a.sin_port);
}

class SlurmPreflightLab : public LabPerSuiteTest<1> {
 protected:
  static ClusterSpec spec() {
    ClusterSpec s = lab_->cluster_spec("alpha");
    s.ssh.connect_timeout_s = 5;
    s.ssh.command_timeout_s = 30;
    return s;
  }
  static std::vector<PreflightCheck> check(const ClusterSpec& s) {
    SlurmSite site(s, std::make_unique<SshSession>(s.name, s.ssh), SlurmSiteOptions{kAgent});
    return site.preflight();
  }
  // The only failed check, with its line for the failure message.
  static PreflightCheck only_failure(const std::vector<PreflightCheck>& checks) {
    std::string lines;
    std::vector<PreflightCheck> failed;
    for (const auto& c : checks) {
      lines += preflight_line(c) + "\n";
      if (!c.ok) failed.push_back(c);
    }
    EXPECT_EQ(failed.size(), 1u) << lines;
    return failed.empty() ? PreflightCheck{} : failed.front();
  }
};

TEST_F(SlurmPreflightLab, AClusterConfiguredRightPassesEveryCheck) {
  std::string lines;
  auto checks = check(spec());
  for (const auto& c : checks) lines += preflight_line(c) + "\n";
  EXPECT_EQ(first_failure(checks), nullptr) << lines;
  ASSERT_EQ(checks.size(), 10u) << lines;
  EXPECT_THAT(lines, HasSubstr("writable from a compute node"));
  EXPECT_THAT(lines, HasSubstr("uploaded and runs"));
}

TEST_F(SlurmPreflightLab, AClosedPortIsNamedBeforeSsh) {
  ClusterSpec s = spec();
  s.ssh.port = closed_port();
  auto failed = only_failure(check(s));
  EXPECT_EQ(failed.name, "port");
  EXPECT_THAT(failed.why, HasSubstr("does not accept connections"));
}

TEST_F(SlurmPreflightLab, AMissingKeyFileIsNamed) {
  ClusterSpec s = spec();
  s.ssh.key_file = lab_->dir() + "/no-such-key";
  auto failed = only_failure(check(s));
  EXPECT_EQ(failed.name, "key-file");
  EXPECT_THAT(failed.why, HasSubstr("no-such-key"));
}

TEST_F(SlurmPreflightLab, AnUnknownPartitionIsNamed) {
  ClusterSpec s = spec();
  s.slurm.partition = "nosuch";
  // The storage test's srun asks for that partition too: it falls back to the login node.
  std::vector<PreflightCheck> checks = check(s);
  auto failed = only_failure(checks);
  EXPECT_EQ(failed.name, "partition");
  EXPECT_THAT(failed.why, HasSubstr("partition nosuch does not exist"));
}

TEST_F(SlurmPreflightLab, AReadOnlyStorageRootIsNamed) {
  ClusterSpec s = spec();
  s.storage_root = "/sys/orch-preflight-storage";  // sysfs: nobody may write there, root neither
  auto failed = only_failure(check(s));
  EXPECT_EQ(failed.name, "storage-root");
  EXPECT_THAT(failed.why, HasSubstr("is not writable from a compute node"));
}

TEST_F(SlurmPreflightLab, NoRsyncOnTheLoginNodeIsNamed) {
  // The ssh user's bash reads ~/.bashrc: its PATH there is /usr/bin without rsync.
  const std::string home = lab_->dir() + "/alpha/home";
  const std::string bin = home + "/bin-without-rsync";
  fs::create_directories(bin);
  for (const auto& e : fs::directory_iterator("/usr/bin")) {
    if (e.path().filename() == "rsync") continue;
    std::error_code ec;
    fs::create_symlink(e.path(), bin + "/" + e.path().filename().string(), ec);
  }
  std::ofstream(home + "/.bashrc") << "export PATH=" << bin << ":/usr/sbin\n";
  auto checks = check(spec());
  fs::remove(home + "/.bashrc");
  auto failed = only_failure(checks);
  EXPECT_EQ(failed.name, "rsync");
  EXPECT_THAT(failed.why, HasSubstr("rsync is not on the login node's PATH"));
}

}  // namespace
}  // namespace orch::test
