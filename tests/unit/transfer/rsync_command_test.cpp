// The command lines of a transfer (adapters/transfer/rsync_command.h): flags, units, the
// OpenSSH options, and quoting proven by letting the real /bin/sh and the real rsync split the
// lines we build (a fake `ssh` and a fake `rsync` on PATH print the words they received).
#include "adapters/transfer/rsync_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/process/run_captured.h"

namespace orch::transfer {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Words = std::vector<std::string>;

SshEndpoint lab_endpoint() {
  SshEndpoint e;
  e.host = "127.0.0.1";
  e.port = 2222;
  e.user = "root";
  e.key_file = "/lab/ssh/id_ed25519";
  e.known_hosts = "/lab/ssh/known_hosts";
  e.connect_timeout_s = 7;
  return e;
}

// A directory of fake programs (`ssh`, `rsync`) that write their argv, one word per line, to
// <dir>/<name>.args and exit (ssh 255, as when it cannot connect; rsync 0).
class FakePrograms {
 public:
  explicit FakePrograms(const Words& names) {
    char tmpl[] = "/tmp/orch-transfer-cmd-XXXXXX";
    dir_ = mkdtemp(tmpl);
    for (const std::string& name : names) {
      const std::string path = dir_ + "/" + name;
      std::ofstream(path) << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " << dir_
                          << "/" << name << ".args\nexit " << (name == "ssh" ? 255 : 0) << "\n";
      chmod(path.c_str(), 0755);
    }
  }
  ~FakePrograms() { fs::remove_all(dir_); }
  const std::string& dir() const { return dir_; }
  std::string path_env() const { return "PATH=" + dir_ + ":" + std::getenv("PATH"); }
  Words args(const std::string& name) const {
    std::ifstream in(dir_ + "/" + name + ".args");
    Words words;
    for (std::string line; std::getline(in, line);) words.push_back(line);
    return words;
  }

 private:
  std::string dir_;
};

TEST(RsyncBwlimit, IsInKibibytesPerSecondRoundedUpAndAtLeastOne) {
  EXPECT_EQ(bwlimit_kib(0), 0u);       // no cap
  EXPECT_EQ(bwlimit_kib(-5), 0u);      // no cap either
  EXPECT_EQ(bwlimit_kib(8e6), 7813u);  // 8,000,000 / 1024 = 7812.5
  EXPECT_EQ(bwlimit_kib(1024), 1u);
  EXPECT_EQ(bwlimit_kib(1025), 2u);
  EXPECT_EQ(bwlimit_kib(1), 1u);
  EXPECT_EQ(bwlimit_kib(1e9), 976563u);
}

TEST(RsyncFlags, ArchivePartialProgressAndSecludedArgs) {
  EXPECT_THAT(rsync_flags({}),
              ElementsAre("-a", "--partial", "--info=progress2", "--no-inc-recursive", "-s"));
}

TEST(RsyncFlags, ChecksumAndCapWhenAsked) {
  EXPECT_THAT(rsync_flags({.directory = true, .checksum = true, .cap_bytes_per_s = 8e6}),
              ElementsAre("-a", "--partial", "--info=progress2", "--no-inc-recursive", "-s",
                          "--checksum", "--bwlimit=7813"));
}

TEST(TransferSshOptions, EveryOptionExplicitAndHostKeysStrict) {
  EXPECT_THAT(
      *ssh_options(lab_endpoint()),
      ElementsAre("-F", "/dev/null", "-p", "2222", "-i", "/lab/ssh/id_ed25519", "-o",
                  "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                  "-o", "UserKnownHostsFile=/lab/ssh/known_hosts", "-o", "ConnectTimeout=7", "-o",
                  "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4"));
}

TEST(TransferSshOptions, TrustOnFirstUseAcceptsOnlyNewKeys) {
  SshEndpoint e = lab_endpoint();
  e.accept_new = true;
  EXPECT_THAT(*ssh_options(e), ::testing::Contains("StrictHostKeyChecking=accept-new"));
}

TEST(TransferSshOptions, RefusesAHostOrUserThatCouldBeAnOption) {
  for (const char* host : {"-oProxyCommand=touch /tmp/x", "a b", "", "host;id", "h\nx"}) {
    SshEndpoint e = lab_endpoint();
    e.host = host;
    auto r = ssh_options(e);
    ASSERT_FALSE(r) << host;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  }
  SshEndpoint e = lab_endpoint();
  e.user = "-lroot";
  EXPECT_FALSE(ssh_options(e));
  e = lab_endpoint();
  e.port = 0;
  EXPECT_FALSE(ssh_options(e));
}

TEST(TransferSshCommand, UserThenHostAfterTheEndOfOptions) {
  auto argv = ssh_command_argv(lab_endpoint(), "echo hi");
  ASSERT_TRUE(argv);
  Words tail(argv->end() - 5, argv->end());
  EXPECT_THAT(tail, ElementsAre("-l", "root", "--", "127.0.0.1", "echo hi"));
  EXPECT_EQ(argv->front(), "ssh");
}

TEST(RsyncRshQuote, SingleQuotesWithQuotesDoubled) {
  EXPECT_EQ(*rsync_rsh_quote("plain"), "'plain'");
  EXPECT_EQ(*rsync_rsh_quote("a b"), "'a b'");
  EXPECT_EQ(*rsync_rsh_quote("it's"), "'it''s'");
  EXPECT_EQ(*rsync_rsh_quote("say \"x\""), "'say \"x\"'");
  EXPECT_FALSE(rsync_rsh_quote(std::string("a\0b", 3)));
}

TEST(RsyncRemoteShell, RealRsyncSplitsItIntoTheOptionsWeMeant) {
  SshEndpoint e = lab_endpoint();
  e.key_file = "/keys/it's a \"key\" $(id)";
  e.known_hosts = "/kh/with space";
  auto rsh = rsync_remote_shell(e);
  ASSERT_TRUE(rsh);
  FakePrograms fake({"ssh"});
  // The real rsync runs our -e; the fake ssh records what it was given and fails.
  auto run =
      process::run_captured({"rsync", "-e", *rsh, "root@127.0.0.1:/src", fake.dir() + "/dst"},
                            {.timeout = std::chrono::seconds(20), .env = {fake.path_env()}});
  ASSERT_TRUE(run);
  Words got = fake.args("ssh");
  Words want = *ssh_options(e);
  ASSERT_GE(got.size(), want.size());
  EXPECT_EQ(Words(got.begin(), got.begin() + static_cast<long>(want.size())), want);
}

TEST(RsyncPaths, DirectoriesCopyTheirContentsFilesCopyToTheExactPath) {
  EXPECT_EQ(source_arg("/data/set", true), "/data/set/");
  EXPECT_EQ(source_arg("/data/set//", true), "/data/set/");
  EXPECT_EQ(source_arg("/data/file.bin", false), "/data/file.bin");
  EXPECT_EQ(directory_to_create("/data/set/", true), "/data/set");
  EXPECT_EQ(directory_to_create("/data/sub/file.bin", false), "/data/sub");
  EXPECT_EQ(directory_to_create("/file.bin", false), "/");
  EXPECT_EQ(remote_location(lab_endpoint(), "/a b"), "root@127.0.0.1:/a b");
  SshEndpoint v6 = lab_endpoint();
  v6.host = "::1";
  v6.user = "";
  EXPECT_EQ(remote_location(v6, "/x"), "[::1]:/x");
}

TEST(RsyncLocalCopy, DirectoryWithTrailingSlashesFileExact) {
  EXPECT_THAT(*local_copy_argv({.directory = true}, "/src/ds", "/dst/ds"),
              ElementsAre("rsync", "-a", "--partial", "--info=progress2", "--no-inc-recursive",
                          "-s", "/src/ds/", "/dst/ds/"));
  auto file = local_copy_argv({.cap_bytes_per_s = 2048}, "/src/a b.ckpt", "/dst/c'd.ckpt");
  ASSERT_TRUE(file);
  EXPECT_THAT(Words(file->end() - 3, file->end()),
              ElementsAre("--bwlimit=2", "/src/a b.ckpt", "/dst/c'd.ckpt"));
}

TEST(RsyncLocalCopy, RefusesRelativePaths) {
  auto r = local_copy_argv({}, "src", "/dst");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_FALSE(local_copy_argv({}, "/src", ""));
}

TEST(RsyncPullHere, RemoteSourceThroughSshIntoALocalPath) {
  auto argv = pull_argv({.directory = true}, lab_endpoint(), "/remote/ds", "/local/ds");
  ASSERT_TRUE(argv);
  EXPECT_THAT(Words(argv->end() - 4, argv->end()),
              ElementsAre("-e", *rsync_remote_shell(lab_endpoint()), "root@127.0.0.1:/remote/ds/",
                          "/local/ds/"));
}

TEST(RsyncPushHere, TheRemoteSideMakesTheDestinationDirectoryFirst) {
  auto argv = push_argv({}, "/local/ck/step 5.ckpt", lab_endpoint(), "/remote/it's/step 5.ckpt");
  ASSERT_TRUE(argv);
  EXPECT_THAT(Words(argv->end() - 5, argv->end()),
              ElementsAre("-e", *rsync_remote_shell(lab_endpoint()),
                          "--rsync-path=mkdir -p '/remote/it'\\''s' && rsync",
                          "/local/ck/step 5.ckpt", "root@127.0.0.1:/remote/it's/step 5.ckpt"));
}

TEST(RsyncPullViaDestination, TheLoginNodesShellRunsRsyncWithEveryWordIntact) {
  const std::string from = "/alpha/ck pt/it's $(id) `id`";
  FakePrograms fake({"rsync"});
  const std::string to = fake.dir() + "/dst dir/x";
  const std::string pid_file = fake.dir() + "/rsync.pid";
  SshEndpoint peer = lab_endpoint();
  peer.key_file = "/beta's keys/id";
  auto cmd = remote_pull_command({.directory = true, .checksum = true, .cap_bytes_per_s = 8e6},
                                 peer, from, to, pid_file);
  ASSERT_TRUE(cmd);
  // A real shell runs it, as sshd would; the fake rsync records the words it got.
  auto run = process::run_captured({"/bin/sh", "-c", *cmd},
                                   {.timeout = std::chrono::seconds(20), .env = {fake.path_env()}});
  ASSERT_TRUE(run);
  EXPECT_EQ(run->exit.exit_code, 0) << run->err;
  auto want =
      pull_argv({.directory = true, .checksum = true, .cap_bytes_per_s = 8e6}, peer, from, to);
  ASSERT_TRUE(want);
  Words got = fake.args("rsync");
  got.insert(got.begin(), "rsync");
  EXPECT_EQ(got, *want);
  EXPECT_TRUE(fs::is_directory(fake.dir() + "/dst dir/x")) << "mkdir -p of the destination";
  EXPECT_FALSE(fs::exists(pid_file)) << "the pid file is removed when rsync ends";
}

TEST(RsyncPullViaDestination, RecordsItsProcessGroupForTheStop) {
  auto cmd = remote_pull_command({}, lab_endpoint(), "/a", "/b/c", "/tmp/x.pid");
  ASSERT_TRUE(cmd);
  EXPECT_THAT(*cmd, ::testing::StartsWith("echo $$ > '/tmp/x.pid' && mkdir -p '/b' && LC_ALL=C "
                                          "'rsync' '-a' "));
  EXPECT_THAT(*cmd, ::testing::EndsWith("; rc=$?; rm -f '/tmp/x.pid'; exit $rc"));
  EXPECT_EQ(*remote_stop_command("/tmp/x.pid"),
            "p=$(cat '/tmp/x.pid' 2>/dev/null) || exit 0; kill -TERM -- \"-$p\" 2>/dev/null || "
            "kill -TERM \"$p\" 2>/dev/null; rm -f '/tmp/x.pid'");
}

TEST(RsyncPullViaDestination, TheStopCommandIsHarmlessWhenThePullHasEnded) {
  auto stop = remote_stop_command("/tmp/orch-transfer-no-such.pid");
  ASSERT_TRUE(stop);
  auto run = process::run_captured({"/bin/sh", "-c", *stop}, {.timeout = std::chrono::seconds(10)});
  ASSERT_TRUE(run);
  EXPECT_EQ(run->exit.exit_code, 0);
}

TEST(RsyncOnOneLoginNode, CopiesBetweenTwoOfItsPaths) {
  auto cmd = remote_local_copy_command({.directory = true}, "/s", "/d", "/tmp/p.pid");
  ASSERT_TRUE(cmd);
  EXPECT_THAT(*cmd, HasSubstr("'--no-inc-recursive' '-s' '/s/' '/d/';"));
}

TEST(RsyncExitCodes, SayWhatTheyMean) {
  EXPECT_EQ(rsync_exit_meaning(23), "partial transfer due to error");
  EXPECT_EQ(rsync_exit_meaning(12), "error in rsync protocol data stream");
  EXPECT_THAT(rsync_exit_meaning(255), HasSubstr("ssh"));
  EXPECT_THAT(rsync_exit_meaning(127), HasSubstr("not found"));
  EXPECT_EQ(rsync_exit_meaning(99), "unknown exit code");
}

}  // namespace
}  // namespace orch::transfer
