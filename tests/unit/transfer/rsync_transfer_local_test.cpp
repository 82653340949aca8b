// RsyncTransferPort end to end on the local route: real rsync between temporary directories,
// watched the way the transfer worker watches it (progress, cap changes, stop requests).
#include "adapters/transfer/rsync_transfer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace orch {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// The caller's side of a transfer: records every progress call; the cap and the stop request
// are functions of what it has seen so far.
class ScriptedControl : public TransferControl {
 public:
  std::function<double(const ScriptedControl&)> cap = [](const ScriptedControl&) { return 0.0; };
  std::function<bool(const ScriptedControl&)> stop = [](const ScriptedControl&) { return false; };
  std::vector<TransferProgress> seen;
  std::vector<Clock::time_point> seen_at;

  void progress(const TransferProgress& p) override {
    seen.push_back(p);
    seen_at.push_back(Clock::now());
  }
  double cap_bytes_per_s() override { return cap(*this); }
  bool stop_requested() override { return stop(*this); }
  std::uint64_t bytes() const { return seen.empty() ? 0 : seen.back().bytes_done; }
};

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t v = rng();
    for (std::size_t k = 0; k < 8 && i + k < n; ++k) s[i + k] = static_cast<char>(v >> (8 * k));
  }
  return s;
}

void write_file(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every regular file under `dir`, relative path -> contents.
std::map<std::string, std::string> tree(const std::string& dir) {
  std::map<std::string, std::string> files;
  if (!fs::exists(dir)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) {
      files[fs::relative(e.path(), dir).string()] = read_file(e.path().string());
    }
  }
  return files;
}

class TransferLocal : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/orch-transfer-local-XXXXXX";
    root_ = mkdtemp(tmpl);
    ClusterSpec a;
    a.name = "a";
    a.provider = "local";
    ClusterSpec b = a;
    b.name = "b";
    clusters_ = {a, b};
  }
  void TearDown() override { fs::remove_all(root_); }

  RsyncTransferPort port(RsyncTransferPort::Options options = {}) {
    return RsyncTransferPort(clusters_, root_ + "/work", options);
  }
  TransferRequest request(const std::string& from, const std::string& to, bool directory) {
    TransferRequest r;
    r.id = 42;
    r.from = {"a", root_ + "/" + from};
    r.to = {"b", root_ + "/" + to};
    r.directory = directory;
    return r;
  }
  // A directory of `files` random files of `each` bytes (one in a subdirectory, one with a
  // space and a quote in its name).
  std::uint64_t make_dataset(const std::string& dir, int files, std::size_t each) {
    for (int i = 0; i < files; ++i) {
      std::string name = i == 0 ? "sub/shard 0's.bin" : "shard-" + std::to_string(i) + ".bin";
      write_file(root_ + "/" + dir + "/" + name, random_bytes(each, static_cast<unsigned>(i)));
    }
    return static_cast<std::uint64_t>(files) * each;
  }

  std::string root_;
  std::vector<ClusterSpec> clusters_;
};

TEST_F(TransferLocal, CopiesADirectoryOfFilesByteForByte) {
  const auto total = make_dataset("src/ds", 4, 300000);
  ScriptedControl control;
  auto r = request("src/ds", "dst/replica/ds", true);
  r.bytes_hint = total;
  auto outcome = port().run(r, control);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(tree(root_ + "/dst/replica/ds"), tree(root_ + "/src/ds"));
  EXPECT_EQ(outcome->route, "local");
  EXPECT_EQ(outcome->bytes, total);
  EXPECT_EQ(outcome->restarts, 0);
  EXPECT_GT(outcome->seconds, 0);
  ASSERT_FALSE(control.seen.empty());
  EXPECT_EQ(control.seen.back().percent, 100);
  EXPECT_EQ(control.seen.back().bytes_done, total);
  EXPECT_EQ(control.seen.back().bytes_total, total);
  EXPECT_EQ(control.seen.back().route, "local");
}

TEST_F(TransferLocal, CopyingAgainSendsNothing) {
  make_dataset("src/ds", 3, 100000);
  ScriptedControl first;
  ASSERT_TRUE(port().run(request("src/ds", "dst/ds", true), first));
  ScriptedControl again;
  auto outcome = port().run(request("src/ds", "dst/ds", true), again);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->bytes, 0u);
}

TEST_F(TransferLocal, CopiesOneFileToTheExactPathMakingItsDirectory) {
  const std::string bytes = random_bytes(1234567, 9);
  write_file(root_ + "/src/ckpt/step-500.ckpt", bytes);
  ScriptedControl control;
  auto outcome =
      port().run(request("src/ckpt/step-500.ckpt", "dst/a b/c/step-500.ckpt", false), control);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(read_file(root_ + "/dst/a b/c/step-500.ckpt"), bytes);
  EXPECT_EQ(tree(root_ + "/dst").size(), 1u);  // the file itself, not a directory around it
  EXPECT_EQ(outcome->bytes, bytes.size());
}

TEST_F(TransferLocal, ACapChangeMidTransferRestartsRsyncAndTheCopyStillCompletes) {
  const auto total = make_dataset("src/ds", 6, 1000000);
  ScriptedControl control;
  // 2 MB/s at first; past 0.5 MB a cap that rounds to the same --bwlimit (no restart); past
  // 1.5 MB no cap at all (a restart).
  control.cap = [](const ScriptedControl& c) {
    if (c.bytes() > 1500000) return 0.0;
    if (c.bytes() > 500000) return 2e6 + 100;
    return 2e6;
  };
  auto r = request("src/ds", "dst/ds", true);
  r.bytes_hint = total;
  const auto t0 = Clock::now();
  auto outcome = port().run(r, control);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(tree(root_ + "/dst/ds"), tree(root_ + "/src/ds"));
  EXPECT_EQ(outcome->restarts, 1);
  // Bytes are what the runs reported: the whole data set, and the file the restart cut sent
  // again (a local copy resends a file whole).
  EXPECT_GE(outcome->bytes, total);
  // Progress said which cap the running rsync had: 2 MB/s first, none at the end.
  ASSERT_GE(control.seen.size(), 2u);
  EXPECT_EQ(control.seen.front().cap_bytes_per_s, 2e6);
  EXPECT_EQ(control.seen.back().cap_bytes_per_s, 0);
  // Not more than about 4 progress calls a second.
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_LE(static_cast<double>(control.seen.size()), 4 * seconds + 3);
  for (std::size_t i = 1; i + 1 < control.seen_at.size(); ++i) {
    EXPECT_GE(control.seen_at[i] - control.seen_at[i - 1], std::chrono::milliseconds(200));
  }
}

TEST_F(TransferLocal, AMissingSourceIsAnIoErrorWithRsyncsMessage) {
  ScriptedControl control;
  auto outcome = port().run(request("src/no-such-dir", "dst/ds", true), control);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().kind, ErrorKind::io);
  EXPECT_THAT(outcome.error().message, HasSubstr("transfer 42 (local, a:"));
  EXPECT_THAT(outcome.error().message, HasSubstr("rsync exited 23"));
  EXPECT_THAT(outcome.error().message, HasSubstr("No such file or directory"));
}

TEST_F(TransferLocal, AStopRequestStopsItAsAConflictAndARunAgainFinishesTheCopy) {
  const auto total = make_dataset("src/ds", 4, 1000000);
  ScriptedControl control;
  control.cap = [](const ScriptedControl&) { return 1e6; };  // 4 s for the whole copy
  control.stop = [](const ScriptedControl& c) { return c.bytes() > 300000; };
  const auto t0 = Clock::now();
  auto stopped = port().run(request("src/ds", "dst/ds", true), control);
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().kind, ErrorKind::conflict);
  EXPECT_THAT(stopped.error().message, HasSubstr("stopped"));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(3));  // at once, not at the copy's end
  EXPECT_NE(tree(root_ + "/dst/ds"), tree(root_ + "/src/ds"));

  ScriptedControl again;
  auto outcome = port().run(request("src/ds", "dst/ds", true), again);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(tree(root_ + "/dst/ds"), tree(root_ + "/src/ds"));
  EXPECT_LE(outcome->bytes, total);
}

TEST_F(TransferLocal, AStopRequestedBeforeItStartsRunsNothing) {
  make_dataset("src/ds", 1, 1000);
  ScriptedControl control;
  control.stop = [](const ScriptedControl&) { return true; };
  auto outcome = port().run(request("src/ds", "dst/ds", true), control);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().kind, ErrorKind::conflict);
  EXPECT_FALSE(fs::exists(root_ + "/dst/ds/shard-0.bin"));
}

// A "rsync" that prints nothing and never ends stands in for a hung copy.
TEST_F(TransferLocal, ARunThatPrintsNothingForTheStallTimeoutIsKilled) {
  make_dataset("src/ds", 1, 1000);
  const std::string bin = root_ + "/bin";
  fs::create_directories(bin);
  std::ofstream(bin + "/rsync") << "#!/bin/sh\nexec sleep 60\n";
  chmod((bin + "/rsync").c_str(), 0755);
  const std::string old_path = std::getenv("PATH");
  setenv("PATH", (bin + ":" + old_path).c_str(), 1);
  RsyncTransferPort::Options options;
  options.stall_timeout = std::chrono::milliseconds(1000);
  ScriptedControl control;
  const auto t0 = Clock::now();
  auto outcome = port(options).run(request("src/ds", "dst/ds", true), control);
  setenv("PATH", old_path.c_str(), 1);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().kind, ErrorKind::io);
  EXPECT_THAT(outcome.error().message, HasSubstr("printed nothing for 1 s"));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10));
}

TEST_F(TransferLocal, AKubernetesSiteHasNoRoute) {
  clusters_[1].provider = "kubernetes";
  ScriptedControl control;
  auto outcome = port().run(request("src/ds", "dst/ds", true), control);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().kind, ErrorKind::unsupported);
}

}  // namespace
}  // namespace orch
