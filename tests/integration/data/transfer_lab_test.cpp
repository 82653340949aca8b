// Issue 5's transfers on the real Slurm lab (tests/lab/slurm): two clusters, alpha and beta,
// each with its own sshd login node and storage root on this machine. RsyncTransferPort copies
// between their storage roots with real rsync over OpenSSH: pulled by beta's login node from
// alpha's, or relayed through this process; capped, stopped and resumed; against a login node
// that is down. Every test brings up its own lab (label slurm).
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/transfer/rsync_transfer.h"
#include "testkit/slurm_lab.h"

namespace orch {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using test::SlurmLab;

constexpr std::size_t kFile = 8'000'000;  // bytes per file of the data sets

class ScriptedControl : public TransferControl {
 public:
  std::function<double(const ScriptedControl&)> cap = [](const ScriptedControl&) { return 0.0; };
  std::function<bool(const ScriptedControl&)> stop = [](const ScriptedControl&) { return false; };
  std::vector<TransferProgress> seen;

  void progress(const TransferProgress& p) override { seen.push_back(p); }
  double cap_bytes_per_s() override { return cap(*this); }
  bool stop_requested() override { return stop(*this); }
  std::uint64_t bytes() const { return seen.empty() ? 0 : seen.back().bytes_done; }
};

// `files` files of random bytes under dir; their total size.
std::uint64_t make_dataset(const std::string& dir, int files) {
  fs::create_directories(dir);
  std::mt19937_64 rng(static_cast<unsigned>(files));
  std::string bytes(kFile, '\0');
  for (int f = 0; f < files; ++f) {
    for (std::size_t i = 0; i < kFile; i += 8) {
      const std::uint64_t v = rng();
      std::memcpy(&bytes[i], &v, std::min<std::size_t>(8, kFile - i));
    }
    std::ofstream(dir + "/shard-" + std::to_string(f) + ".bin", std::ios::binary) << bytes;
  }
  return static_cast<std::uint64_t>(files) * kFile;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Whether two directories hold the same regular files with the same bytes.
bool same_tree(const std::string& a, const std::string& b) {
  std::map<std::string, std::string> left, right;
  for (auto* side : {&left, &right}) {
    const std::string& dir = side == &left ? a : b;
    if (!fs::exists(dir)) return false;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file()) (*side)[fs::relative(e.path(), dir).string()] = read_file(e.path());
    }
  }
  return !left.empty() && left == right;
}

// Live rsync processes (the lab's login nodes run on this machine) whose command line names
// `path`.
int rsyncs_naming(const std::string& path) {
  int found = 0;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return 0;
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (auto& c : cmd) {
      if (c == '\0') c = ' ';
    }
    if (cmd.rfind("rsync ", 0) == 0 && cmd.find(path) != std::string::npos) ++found;
  }
  closedir(proc);
  return found;
}

bool eventually(std::chrono::milliseconds limit, const std::function<bool()>& done) {
  const auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

class TransferLab : public ::testing::Test {
 protected:
  void SetUp() override {
    auto lab = SlurmLab::start({"alpha", "beta"});
    ASSERT_TRUE(lab) << lab.error().message;
    lab_ = std::move(lab).value();
    char tmpl[] = "/tmp/orch-transfer-lab-XXXXXX";
    work_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    if (!work_.empty()) fs::remove_all(work_);
  }

  std::string storage(const std::string& cluster) const {
    return lab_->cluster(cluster).storage_root;
  }
  // alpha and beta as the clusters file would have them; beta pulls from alpha when asked.
  std::vector<ClusterSpec> clusters(bool beta_pulls_from_alpha) const {
    ClusterSpec alpha = lab_->cluster_spec("alpha");
    ClusterSpec beta = lab_->cluster_spec("beta");
    if (beta_pulls_from_alpha) {
      const auto& a = lab_->cluster("alpha");
      beta.data.pull_from["alpha"] =
          PeerSpec{a.host, a.ssh_port, a.user, a.key_file, a.known_hosts};
    }
    return {alpha, beta};
  }
  TransferRequest alpha_to_beta(const std::string& name, std::uint64_t bytes) const {
    TransferRequest r;
    r.id = 5;
    r.from = {"alpha", storage("alpha") + "/" + name};
    r.to = {"beta", storage("beta") + "/replicas/" + name};
    r.directory = true;
    r.bytes_hint = bytes;
    return r;
  }

  std::unique_ptr<SlurmLab> lab_;
  std::string work_;
};

TEST_F(TransferLab, PullRouteCopiesADirectoryByteForByte) {
  const auto total = make_dataset(storage("alpha") + "/ds", 6);  // 48 MB
  RsyncTransferPort port(clusters(true), work_);
  ScriptedControl control;
  auto outcome = port.run(alpha_to_beta("ds", total), control);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->route, "pull via beta login node");
  EXPECT_EQ(outcome->bytes, total);
  EXPECT_TRUE(same_tree(storage("alpha") + "/ds", storage("beta") + "/replicas/ds"));
  ASSERT_FALSE(control.seen.empty());
  EXPECT_EQ(control.seen.back().route, "pull via beta login node");
  std::printf("pull route: %.1f MB in %.2f s = %.1f MB/s uncapped\n", total / 1e6, outcome->seconds,
              total / 1e6 / outcome->seconds);

  // A copy within beta runs on beta's login node, between its two paths.
  TransferRequest within;
  within.id = 6;
  within.from = {"beta", storage("beta") + "/replicas/ds"};
  within.to = {"beta", storage("beta") + "/backup/ds"};
  within.directory = true;
  auto local_copy = port.run(within, control);
  ASSERT_TRUE(local_copy) << local_copy.error().message;
  EXPECT_EQ(local_copy->route, "on beta login node");
  EXPECT_TRUE(same_tree(storage("alpha") + "/ds", storage("beta") + "/backup/ds"));
}

TEST_F(TransferLab, BetweenASlurmSiteAndALocalSiteRsyncRunsHere) {
  const auto total = make_dataset(storage("alpha") + "/ds", 2);
  ClusterSpec here;
  here.name = "here";
  here.provider = "local";
  auto specs = clusters(false);
  specs.push_back(here);
  RsyncTransferPort port(specs, work_);
  ScriptedControl control;

  TransferRequest pull;  // alpha -> here: pulled from alpha's login node
  pull.id = 8;
  pull.from = {"alpha", storage("alpha") + "/ds"};
  pull.to = {"here", work_ + "/local copy/ds"};
  pull.directory = true;
  auto pulled = port.run(pull, control);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_EQ(pulled->route, "pull from alpha login node");
  EXPECT_EQ(pulled->bytes, total);
  EXPECT_TRUE(same_tree(storage("alpha") + "/ds", work_ + "/local copy/ds"));

  TransferRequest push;  // here -> beta, one file to a path whose directories do not exist yet
  push.id = 9;
  push.from = {"here", work_ + "/local copy/ds/shard-1.bin"};
  push.to = {"beta", storage("beta") + "/ckpt/step 500/shard-1.bin"};
  auto pushed = port.run(push, control);
  ASSERT_TRUE(pushed) << pushed.error().message;
  EXPECT_EQ(pushed->route, "push to beta login node");
  EXPECT_EQ(read_file(storage("beta") + "/ckpt/step 500/shard-1.bin"),
            read_file(storage("alpha") + "/ds/shard-1.bin"));
}

// Issue 5's acceptance: a transfer capped at X MB/s averages within 10% of X, measured here as
// bytes over the wall time of the whole run. That time includes about a second of start-up on
// this 2-core machine (two ssh logins, rsync's file list) that no cap governs, so the copy is
// long enough (25 s at X) for the start-up to stay a small part of it.
TEST_F(TransferLab, BandwidthCapIsHeld) {
  const double cap = 8e6;                                         // X = 8 MB/s
  const auto total = make_dataset(storage("alpha") + "/ds", 25);  // 200 MB: 25 s at X
  RsyncTransferPort port(clusters(true), work_);
  ScriptedControl control;
  control.cap = [cap](const ScriptedControl&) { return cap; };
  const auto t0 = Clock::now();
  double first_bytes_s = -1;  // when the first bytes arrived
  control.stop = [&](const ScriptedControl& c) {
    if (first_bytes_s < 0 && c.bytes() > 0) {
      first_bytes_s = std::chrono::duration<double>(Clock::now() - t0).count();
    }
    return false;
  };
  auto outcome = port.run(alpha_to_beta("ds", total), control);
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_TRUE(outcome) << outcome.error().message;
  ASSERT_TRUE(same_tree(storage("alpha") + "/ds", storage("beta") + "/replicas/ds"));
  const double measured = static_cast<double>(total) / wall;
  std::printf(
      "bandwidth cap: X = %.2f MB/s; measured %.0f bytes in %.2f s = %.3f MB/s (%+.1f%% of X); "
      "first bytes after %.2f s\n",
      cap / 1e6, static_cast<double>(total), wall, measured / 1e6, 100 * (measured - cap) / cap,
      first_bytes_s);
  EXPECT_NEAR(measured, cap, 0.10 * cap);
  EXPECT_EQ(outcome->restarts, 0);
  for (const auto& p : control.seen) EXPECT_EQ(p.cap_bytes_per_s, cap);
}

TEST_F(TransferLab, ACapChangeRestartsTheRsyncOnTheLoginNodeAndTheCopyCompletes) {
  const auto total = make_dataset(storage("alpha") + "/ds", 6);
  RsyncTransferPort port(clusters(true), work_);
  ScriptedControl control;
  control.cap = [](const ScriptedControl& c) { return c.bytes() > 12'000'000 ? 0.0 : 8e6; };
  auto outcome = port.run(alpha_to_beta("ds", total), control);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->restarts, 1);
  EXPECT_TRUE(same_tree(storage("alpha") + "/ds", storage("beta") + "/replicas/ds"));
  EXPECT_EQ(rsyncs_naming(storage("beta") + "/replicas/ds"), 0);
}

TEST_F(TransferLab, APullStoppedHalfwayResumesWhenRunAgain) {
  const auto total = make_dataset(storage("alpha") + "/ds", 6);
  RsyncTransferPort port(clusters(true), work_);
  ScriptedControl stopping;
  stopping.cap = [](const ScriptedControl&) { return 16e6; };
  stopping.stop = [total](const ScriptedControl& c) { return c.bytes() >= total / 2; };
  auto stopped = port.run(alpha_to_beta("ds", total), stopping);
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().kind, ErrorKind::conflict);
  EXPECT_THAT(stopped.error().message, HasSubstr("stopped"));
  // The rsync on beta's login node (and the one it started on alpha's) is gone too.
  EXPECT_TRUE(eventually(std::chrono::seconds(5), [&] {
    return rsyncs_naming(storage("beta") + "/replicas/ds") == 0 &&
           rsyncs_naming(storage("alpha") + "/ds") == 0;
  }));

  ScriptedControl again;
  auto outcome = port.run(alpha_to_beta("ds", total), again);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_TRUE(same_tree(storage("alpha") + "/ds", storage("beta") + "/replicas/ds"));
  std::printf("pull resumed: %llu of %llu bytes sent the second time\n",
              static_cast<unsigned long long>(outcome->bytes),
              static_cast<unsigned long long>(total));
  EXPECT_LT(outcome->bytes, total * 3 / 4);
}

TEST_F(TransferLab, RelayRouteCopiesAndAStoppedRelayResumes) {
  const auto total = make_dataset(storage("alpha") + "/ds", 6);
  RsyncTransferPort port(clusters(false), work_);
  const std::string relay = work_ + "/relay/5";
  // Stopped halfway through the push (the relay counts both legs: 2 x total in all).
  ScriptedControl stopping;
  stopping.cap = [](const ScriptedControl&) { return 24e6; };
  stopping.stop = [total](const ScriptedControl& c) { return c.bytes() >= total * 3 / 2; };
  auto stopped = port.run(alpha_to_beta("ds", total), stopping);
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().kind, ErrorKind::conflict);
  ASSERT_FALSE(stopping.seen.empty());
  EXPECT_EQ(stopping.seen.back().route, "relay via orchestrator");
  EXPECT_EQ(stopping.seen.back().bytes_total, 2 * total);
  EXPECT_TRUE(same_tree(storage("alpha") + "/ds", relay + "/data"))
      << "the relay copy is kept until the push completes";

  ScriptedControl again;
  auto outcome = port.run(alpha_to_beta("ds", total), again);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->route, "relay via orchestrator");
  EXPECT_TRUE(same_tree(storage("alpha") + "/ds", storage("beta") + "/replicas/ds"));
  EXPECT_FALSE(fs::exists(relay)) << "removed once the push completed";
  std::printf("relay resumed: %llu of %llu bytes sent the second time\n",
              static_cast<unsigned long long>(outcome->bytes),
              static_cast<unsigned long long>(total));
  EXPECT_LT(outcome->bytes, total * 3 / 4);
}

TEST_F(TransferLab, ALoginNodeThatIsDownIsUnreachableWithoutAHang) {
  const auto total = make_dataset(storage("alpha") + "/ds", 1);
  ASSERT_TRUE(lab_->stop_login("beta"));
  RsyncTransferPort port(clusters(true), work_);
  ScriptedControl control;
  auto t0 = Clock::now();
  auto pull = port.run(alpha_to_beta("ds", total), control);
  ASSERT_FALSE(pull);
  EXPECT_EQ(pull.error().kind, ErrorKind::unreachable) << pull.error().message;
  EXPECT_THAT(pull.error().message, HasSubstr("Connection refused"));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(30));

  // beta up, alpha (the source its login node pulls from) down: unreachable too.
  ASSERT_TRUE(lab_->start_login("beta"));
  ASSERT_TRUE(lab_->stop_login("alpha"));
  t0 = Clock::now();
  auto from_down_source = port.run(alpha_to_beta("ds", total), control);
  ASSERT_FALSE(from_down_source);
  EXPECT_EQ(from_down_source.error().kind, ErrorKind::unreachable)
      << from_down_source.error().message;
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(30));

  RsyncTransferPort relay(clusters(false), work_);
  auto relayed = relay.run(alpha_to_beta("ds", total), control);
  ASSERT_FALSE(relayed);
  EXPECT_EQ(relayed.error().kind, ErrorKind::unreachable) << relayed.error().message;
}

TEST_F(TransferLab, APinnedHostKeyIsCheckedByScanningTheLoginNode) {
  const auto total = make_dataset(storage("alpha") + "/ds", 1);
  auto specs = clusters(true);
  specs[1].ssh.known_hosts.clear();
  specs[1].ssh.host_key = lab_->cluster("beta").host_key_fingerprint;
  RsyncTransferPort port(specs, work_);
  ScriptedControl control;
  auto outcome = port.run(alpha_to_beta("ds", total), control);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_TRUE(same_tree(storage("alpha") + "/ds", storage("beta") + "/replicas/ds"));

  specs[1].ssh.host_key = "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
  RsyncTransferPort wrong(specs, work_ + "/wrong");
  auto refused = wrong.run(alpha_to_beta("ds", total), control);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(refused.error().message,
              HasSubstr("SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
  EXPECT_THAT(refused.error().message, HasSubstr(lab_->cluster("beta").host_key_fingerprint));
}

}  // namespace
}  // namespace orch
