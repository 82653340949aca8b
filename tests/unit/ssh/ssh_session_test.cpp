// SshSession against a real OpenSSH server on 127.0.0.1 (testkit/test_sshd.h): exec,
// quoting through the remote shell, large streams, timeouts, reconnects, SFTP and concurrent
// callers. Host keys, back-off and key authentication: ssh_session_connect_test.cpp. No mocks.
#include <gmock/gmock.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "adapters/ssh/shell_quote.h"
#include "adapters/ssh/ssh_session.h"
#include "tests/unit/ssh/ssh_test_util.h"

namespace orch {
namespace {

using ssh_test::Clock;
using ssh_test::ms_since;
using ssh_test::read_local;
using ssh_test::ssh_session;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

std::string sh_quoted(const std::string& value) {
  auto q = shell_quote(value);
  EXPECT_TRUE(q.ok()) << q.error().message;
  return q.ok() ? *q : std::string("''");
}

TEST_F(ssh_session, ExecReturnsOutputErrorsAndExitStatus) {
  SshSession ssh("alpha", sshd_.spec());
  const auto start = Clock::now();
  auto r = ssh.exec("echo hi; echo err >&2; exit 3", milliseconds(5000));
  const double first_ms = ms_since(start);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->out, "hi\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_status, 3);
  // The fingerprint is exactly what ssh-keygen -lf prints.
  EXPECT_EQ(ssh.server_fingerprint(), sshd_.host_fingerprint());
  EXPECT_EQ(ssh.site(), "alpha");

  auto ok = ssh.exec("true");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->exit_status, 0);
  std::cout << "[timing] connect + first exec: " << first_ms << " ms\n";
}

TEST_F(ssh_session, FiftyExecsReuseOneConnection) {
  SshSession ssh("alpha", sshd_.spec());
  auto warm = ssh.exec("true", milliseconds(5000));
  ASSERT_TRUE(warm.ok()) << warm.error().message;
  const auto start = Clock::now();
  for (int i = 0; i < 50; ++i) {
    auto r = ssh.exec("echo " + std::to_string(i), milliseconds(5000));
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->out, std::to_string(i) + "\n");
  }
  const double total_ms = ms_since(start);
  EXPECT_EQ(ssh.connect_attempts(), 1u);
  EXPECT_EQ(count_of(sshd_.log(), "Accepted publickey"), 1) << sshd_.log();
  EXPECT_LT(total_ms, 5000.0);
  std::cout << "[timing] 50 execs over one connection: " << total_ms << " ms (" << total_ms / 50
            << " ms per round trip)\n";
}

TEST_F(ssh_session, QuotedValuesSurviveTheRemoteShellByteForByte) {
  SshSession ssh("alpha", sshd_.spec());
  const std::vector<std::string> hostile = {
      "",
      "plain",
      "two words",
      "  leading and trailing  ",
      "it's",
      "'",
      "''",
      "\"double\"",
      "$(touch /tmp/orch-ssh-quote-pwned)",
      "`touch /tmp/orch-ssh-quote-pwned`",
      "${HOME}",
      "$HOME",
      "a;b && c || d | e > f < g &",
      "; touch /tmp/orch-ssh-quote-pwned",
      "&& touch /tmp/orch-ssh-quote-pwned",
      "line one\nline two\n",
      "\n",
      "tab\there",
      "*.ckpt ? [abc] *",
      "~root",
      "!event",
      "# not a comment",
      "-n",
      "-e",
      "--flag=value",
      "back\\slash\\",
      "%s %d %%",
      "\xff\xfe not utf-8 \x80",
      "caf\xc3\xa9",
  };
  for (const auto& v : hostile) {
    auto r = ssh.exec("printf %s " + sh_quoted(v), milliseconds(5000));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->out, v) << "value " << sh_quoted(v);
    // Twice nested: the remote shell hands a quoted script to sh -c.
    auto nested = shell_command({"sh", "-c", "printf %s " + sh_quoted(v)});
    ASSERT_TRUE(nested.ok());
    auto r2 = ssh.exec(*nested, milliseconds(5000));
    ASSERT_TRUE(r2.ok()) << r2.error().message;
    EXPECT_EQ(r2->out, v) << "nested " << *nested;
  }

  // Bulk: every byte 1..255 alone, all of them at once, and thousands of random byte strings
  // (seeded), many per command: `printf %s <q>; printf '\0'` each, split on NUL.
  std::vector<std::string> values;
  std::string all;
  for (int b = 1; b <= 255; ++b) {
    values.emplace_back(1, static_cast<char>(b));
    all += static_cast<char>(b);
  }
  values.push_back(all);
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> len(0, 40);
  std::uniform_int_distribution<int> byte(1, 255);
  for (int i = 0; i < 4000; ++i) {
    std::string v;
    for (int n = len(rng); n > 0; --n) v += static_cast<char>(byte(rng));
    values.push_back(std::move(v));
  }
  std::size_t next = 0;
  int commands = 0;
  while (next < values.size()) {
    std::string script;
    const std::size_t first = next;
    while (next < values.size() && script.size() < 60000) {
      script += "printf %s " + sh_quoted(values[next]) + "; printf '\\0'\n";
      ++next;
    }
    auto r = ssh.exec(script, milliseconds(10000));
    ++commands;
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->exit_status, 0) << r->err;
    std::vector<std::string> got;
    std::size_t pos = 0;
    for (auto nul = r->out.find('\0'); nul != std::string::npos; nul = r->out.find('\0', pos)) {
      got.push_back(r->out.substr(pos, nul - pos));
      pos = nul + 1;
    }
    ASSERT_EQ(got.size(), next - first);
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], values[first + i])
          << "value #" << first + i << " " << sh_quoted(values[first + i]);
    }
  }
  EXPECT_GT(commands, 1);
  EXPECT_NE(access("/tmp/orch-ssh-quote-pwned", F_OK), 0) << "a quoted value was executed";
}

TEST_F(ssh_session, LargeInputAndOutputStreamsDoNotDeadlock) {
  SshSession ssh("alpha", sshd_.spec());
  std::string input(std::size_t{5000000}, '\0');
  std::mt19937 rng(7);
  for (auto& c : input) c = static_cast<char>(rng());
  const auto start = Clock::now();
  auto echoed = ssh.exec("cat", milliseconds(20000), input);
  const double cat_ms = ms_since(start);
  ASSERT_TRUE(echoed.ok()) << echoed.error().message;
  EXPECT_EQ(echoed->exit_status, 0);
  EXPECT_TRUE(echoed->out == input) << "got " << echoed->out.size() << " bytes";

  auto big = ssh.exec("head -c 5000000 /dev/zero | tr '\\0' x; head -c 1000000 /dev/zero >&2",
                      milliseconds(20000));
  ASSERT_TRUE(big.ok()) << big.error().message;
  EXPECT_EQ(big->out, std::string(5000000, 'x'));
  EXPECT_EQ(big->err.size(), 1000000u);

  // Input the command never reads, and input read after it closed its output.
  auto ignored = ssh.exec("true", milliseconds(10000), input);
  ASSERT_TRUE(ignored.ok()) << ignored.error().message;
  EXPECT_EQ(ignored->exit_status, 0);
  auto late =
      ssh.exec("exec >&- 2>&-; wc -c > " + sshd_.dir() + "/late", milliseconds(10000), input);
  ASSERT_TRUE(late.ok()) << late.error().message;
  EXPECT_EQ(late->exit_status, 0);
  EXPECT_EQ(read_local(sshd_.dir() + "/late"), "5000000\n");
  std::cout << "[timing] 5 MB through remote cat: " << cat_ms << " ms\n";
}

TEST_F(ssh_session, KilledCommandReportsTheSignal) {
  SshSession ssh("alpha", sshd_.spec());
  auto r = ssh.exec("echo partial; kill -KILL $$", milliseconds(5000));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->out, "partial\n");
  EXPECT_EQ(r->exit_status, -1);
  EXPECT_THAT(r->err, HasSubstr("killed by signal KILL"));
}

TEST_F(ssh_session, TimeoutClosesTheChannelAndTheNextCallReconnects) {
  SshSession ssh("alpha", sshd_.spec());
  ASSERT_TRUE(ssh.exec("true", milliseconds(5000)).ok());
  const auto start = Clock::now();
  const std::string pid_file = sshd_.dir() + "/sleep.pid";
  auto r = ssh.exec("echo $$ > " + sh_quoted(pid_file) + "; exec sleep 30", milliseconds(500));
  const double elapsed = ms_since(start);
  // sshd leaves a command running when its channel closes: end it here.
  const std::string pid = read_local(pid_file);
  if (!pid.empty()) ::kill(static_cast<pid_t>(std::stol(pid)), SIGKILL);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(r.error().message, HasSubstr("site alpha: "));
  EXPECT_THAT(r.error().message, HasSubstr("timed out"));
  EXPECT_GE(elapsed, 450.0);
  EXPECT_LT(elapsed, 2000.0);

  auto next = ssh.exec("echo back", milliseconds(5000));
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->out, "back\n");
  EXPECT_EQ(ssh.connect_attempts(), 2u);
}

TEST_F(ssh_session, ADeadConnectionIsReplacedOnce) {
  SshSession ssh("alpha", sshd_.spec());
  ASSERT_TRUE(ssh.exec("true", milliseconds(5000)).ok());
  sshd_.kill_connections();
  auto r = ssh.exec("echo again", milliseconds(5000));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->out, "again\n");
  EXPECT_EQ(ssh.connect_attempts(), 2u);

  // The same for SFTP, whose channel died with the connection.
  ASSERT_TRUE(ssh.upload(sshd_.dir() + "/f", "one").ok());
  sshd_.kill_connections();
  auto read = ssh.read_file(sshd_.dir() + "/f", 0, 100);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(*read, "one");
  EXPECT_EQ(ssh.connect_attempts(), 3u);
}

TEST_F(ssh_session, SftpUploadIsAtomicAndReadFileTakesRanges) {
  SshSession ssh("alpha", sshd_.spec());
  const std::string dir = sshd_.dir() + "/files";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string path = dir + "/script.sh";

  auto up = ssh.upload(path, "#!/bin/sh\necho one\n", 0750);
  ASSERT_TRUE(up.ok()) << up.error().message;
  EXPECT_EQ(read_local(path), "#!/bin/sh\necho one\n");
  auto mode = ssh.exec("stat -c %a " + sh_quoted(path), milliseconds(5000));
  ASSERT_TRUE(mode.ok());
  EXPECT_EQ(mode->out, "750\n");

  // Over an existing file (SFTP v3 cannot rename over it: the session falls back to mv -f).
  up = ssh.upload(path, "#!/bin/sh\necho two\n", 0600);
  ASSERT_TRUE(up.ok()) << up.error().message;
  EXPECT_EQ(read_local(path), "#!/bin/sh\necho two\n");
  mode = ssh.exec("stat -c %a " + sh_quoted(path), milliseconds(5000));
  ASSERT_TRUE(mode.ok());
  EXPECT_EQ(mode->out, "600\n");
  auto listing = ssh.exec("ls -a " + sh_quoted(dir), milliseconds(5000));
  ASSERT_TRUE(listing.ok());
  EXPECT_EQ(listing->out, ".\n..\nscript.sh\n") << "a temporary file was left behind";

  // A large file both ways.
  std::string big(std::size_t{3000000}, '\0');
  std::mt19937 rng(3);
  for (auto& c : big) c = static_cast<char>(rng());
  ASSERT_TRUE(ssh.upload(dir + "/big", big).ok());
  auto whole = ssh.read_file(dir + "/big", 0, big.size() + 10);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_TRUE(*whole == big);

  // Ranges.
  ASSERT_TRUE(ssh.upload(dir + "/log", "0123456789").ok());
  auto mid = ssh.read_file(dir + "/log", 3, 4);
  ASSERT_TRUE(mid.ok()) << mid.error().message;
  EXPECT_EQ(*mid, "3456");
  auto tail = ssh.read_file(dir + "/log", 7, 100);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(*tail, "789");
  auto past = ssh.read_file(dir + "/log", 50, 100);
  ASSERT_TRUE(past.ok());
  EXPECT_EQ(*past, "");

  // Missing things.
  auto missing = ssh.read_file(dir + "/nope", 0, 10);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
  EXPECT_THAT(missing.error().message, HasSubstr("site alpha: "));
  auto no_dir = ssh.upload(dir + "/no/such/dir/file", "x");
  ASSERT_FALSE(no_dir.ok());
  EXPECT_EQ(no_dir.error().kind, ErrorKind::not_found);
  // Still one connection, still usable.
  EXPECT_TRUE(ssh.exec("true").ok());
  EXPECT_EQ(ssh.connect_attempts(), 1u);
}
// ---- threads -----------------------------------------------------------------------------------

TEST_F(ssh_session, ConcurrentCallsAreSerialisedSafely) {
  SshSession ssh("alpha", sshd_.spec());
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const std::string word = std::to_string(t) + "-" + std::to_string(i);
        auto r = ssh.exec("echo " + word, milliseconds(10000));
        if (!r.ok() || r->out != word + "\n" || r->exit_status != 0) ++failures[t];
        if (i % 5 == 0) {
          auto f = ssh.read_file(sshd_.dir() + "/sshd_config", 0, 4);
          if (!f.ok()) ++failures[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  EXPECT_EQ(ssh.connect_attempts(), 1u);
}

}  // namespace
}  // namespace orch
