// Issue 40, item 3: the job's command on a local site runs under its `shell:`. Unset, bash where
// the machine has it: `source` (a bash word dash lacks) works; `shell: sh` is the POSIX shell.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::ElementsAre;

bool has_bash() {
  return std::system("command -v bash >/dev/null 2>&1") == 0;
}
bool sh_is_bash() {
  return std::system("/bin/sh -c '[ -n \"$BASH_VERSION\" ]'") == 0;
}

// The command writes its env.sh in its working directory and sources it, as a user's set-up does.
constexpr const char* kSourcesEnv =
    "printf 'export GREETING=hello\\n' > env.sh && source ./env.sh && "
    "echo \"$GREETING ${BASH_VERSION:+bash}\"";

TEST_F(LocalSiteTest, SourceWorksUnderTheDefaultShell) {
  if (!has_bash()) GTEST_SKIP() << "no bash on this machine";
  launch_ok(request("run-source", kSourcesEnv));
  std::vector<std::string> lines;
  RunObservation last = wait_exited("run-source", &lines);
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_EQ(last.exit->exit_code, 0);
  EXPECT_THAT(lines, ElementsAre("hello bash"));
}

TEST_F(LocalSiteTest, ShellShIsThePosixShell) {
  if (sh_is_bash()) GTEST_SKIP() << "/bin/sh is bash here: source works under it too";
  auto r = request("run-sh", kSourcesEnv);
  r.shell = "sh";
  launch_ok(r);
  RunObservation last = wait_exited("run-sh");
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_EQ(last.exit->exit_code, 127);  // dash: "source: not found"
}

TEST_F(LocalSiteTest, ShellBashLoginIsALoginShell) {
  if (!has_bash()) GTEST_SKIP() << "no bash on this machine";
  auto r = request("run-login", "shopt -q login_shell && echo login");
  r.shell = "bash-login";
  launch_ok(r);
  std::vector<std::string> lines;
  RunObservation last = wait_exited("run-login", &lines);
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_EQ(last.exit->exit_code, 0);
  EXPECT_THAT(lines, ElementsAre("login"));
}

}  // namespace
}  // namespace orch::testing
