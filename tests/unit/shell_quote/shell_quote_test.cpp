// shell_quote() against real shells: every value, however hostile, must come back byte for byte
// from `sh -c "printf %s <quoted>"`, and nothing in it may run.
#include <gmock/gmock.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "adapters/ssh/shell_quote.h"

namespace orch {
namespace {

// Runs `shell -c script` without any other shell in between; returns its stdout.
std::string run_shell(const std::string& shell, const std::string& script) {
  int out[2];
  if (pipe(out) != 0) return "<pipe failed>";
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execl(shell.c_str(), shell.c_str(), "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string result;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;)
    result.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return result;
}

std::vector<std::string> shells() {
  std::vector<std::string> s = {"/bin/sh"};
  if (access("/bin/bash", X_OK) == 0) s.push_back("/bin/bash");
  return s;
}

void expect_round_trip(const std::string& value) {
  auto quoted = shell_quote(value);
  ASSERT_TRUE(quoted.ok()) << quoted.error().message;
  for (const auto& sh : shells()) {
    EXPECT_EQ(run_shell(sh, "printf %s " + *quoted), value) << sh << " with " << *quoted;
  }
}

TEST(ShellQuote, HostileValuesComeBackUnchanged) {
  const std::vector<std::string> values = {
      "",
      "plain",
      "two words",
      "it's",
      "'",
      "''",
      "\"double\"",
      "$(touch /tmp/orch-quote-pwned)",
      "`touch /tmp/orch-quote-pwned`",
      "${HOME}",
      "$HOME",
      "a;b && c || d | e > f < g &",
      "line one\nline two\n",
      "tab\there",
      "*.ckpt ? [abc]",
      "~root",
      "!event",
      "# not a comment",
      "-n",
      "--flag=value",
      "back\\slash\\",
      "\xff\xfe not utf-8 \x80",
      "caf\xc3\xa9",
  };
  for (const auto& v : values) expect_round_trip(v);
  EXPECT_NE(access("/tmp/orch-quote-pwned", F_OK), 0) << "a quoted value was executed";
}

TEST(ShellQuote, RandomBytesComeBackUnchanged) {
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> byte(1, 255);  // every byte but NUL
  std::uniform_int_distribution<int> len(0, 40);
  for (int i = 0; i < 200; ++i) {
    std::string v;
    for (int n = len(rng); n > 0; --n) v += static_cast<char>(byte(rng));
    expect_round_trip(v);
  }
}

TEST(ShellQuote, ACommandKeepsEveryWordWhole) {
  auto line = shell_command({"printf", "[%s]", "a b", "$(x)", "it's"});
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(run_shell("/bin/sh", *line), "[a b][$(x)][it's]");
}

TEST(ShellQuote, NulIsRefusedNotTruncated) {
  auto r = shell_quote(std::string("a\0b", 3));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("NUL"));
  EXPECT_FALSE(shell_command({"echo", std::string("\0", 1)}).ok());
}

}  // namespace
}  // namespace orch
