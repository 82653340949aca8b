// The built `orchestrate` binary: --version, `completion bash` for the whole command tree, and
// `job submit` on inputs that are not a job spec file.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/cli/shell_run.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using testing::sh_quote;
using testing::shell;

const std::string kOrchestrate = std::string(ORCH_BIN_DIR) + "/orchestrate";

TEST(OrchestrateBinary, VersionIsTheProjectVersionWithItsCommitAndBuildType) {
  auto r = shell(sh_quote(kOrchestrate) + " --version 2>&1");
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, ::testing::MatchesRegex(std::string("orchestrate ") + ORCH_VERSION +
                                             " \\(commit ([0-9a-f]{12}|unknown), " +
                                             ORCH_BUILD_TYPE + " build\\)\n"));
  // A tree with .git names a commit (the test runs from the build of this checkout).
  if (shell("test -e " + sh_quote(std::string(ORCH_SOURCE_DIR) + "/.git")).status == 0) {
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("unknown"))) << r.out;
  }
}

TEST(OrchestrateBinary, BareOrchestratePrintsTheCommandListAndSucceeds) {
  auto r = shell(sh_quote(kOrchestrate) + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  for (const char* line : {"\n  cluster", "\n  job", "\n  serve", "\n  completion"}) {
    EXPECT_THAT(r.out, HasSubstr(line)) << r.out;
  }
  EXPECT_THAT(r.out, HasSubstr("Examples:"));
}

TEST(OrchestrateBinary, AGroupWithoutItsCommandListsItsCommands) {
  auto r = shell(sh_quote(kOrchestrate) + " job 2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("A subcommand is required"));
  EXPECT_THAT(r.out, HasSubstr("\n  cancel "));
  EXPECT_THAT(r.out, HasSubstr("orchestrate job submit examples/jobs/toy.yaml"));
}

TEST(OrchestrateBinary, ACommandsHelpEndsWithAnExample) {
  auto r = shell(sh_quote(kOrchestrate) + " job list --help 2>&1");
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("{pending,placed,running,resuming,succeeded,failed,cancelled,"));
  EXPECT_THAT(r.out, HasSubstr("Examples:\n  orchestrate job list --state running"));
}

TEST(OrchestrateBinary, CompletionScriptsCoverEveryCommand) {
  const std::string path = ::testing::TempDir() + "/orchestrate.bash";
  auto r = shell(sh_quote(kOrchestrate) + " completion bash > " + sh_quote(path) + " && bash -n " +
                 sh_quote(path) + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string cmd = "source " + sh_quote(path) +
                          " && COMP_WORDS=(orchestrate '') && COMP_CWORD=1 && _orchestrate && "
                          "echo \"${COMPREPLY[*]}\"";
  r = shell("bash -c " + sh_quote(cmd));
  EXPECT_EQ(r.status, 0);
  for (const char* sub : {"cluster", "job", "node", "serve", "demo", "completion"}) {
    EXPECT_THAT(r.out, HasSubstr(sub));
  }
  r = shell(sh_quote(kOrchestrate) + " completion zsh");
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, ::testing::StartsWith("#compdef orchestrate"));
  r = shell(sh_quote(kOrchestrate) + " completion fish 2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
}

TEST(OrchestrateBinary, SubmittingADirectoryIsAUsageError) {
  auto r = shell(sh_quote(kOrchestrate) + " job submit --server http://127.0.0.1:9 " +
                 sh_quote(::testing::TempDir()) + " 2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("is a directory"));
}

TEST(OrchestrateBinary, SubmittingDevZeroIsAUsageError) {
  auto r = shell("timeout 20 " + sh_quote(kOrchestrate) +
                 " job submit --server http://127.0.0.1:9 /dev/zero 2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("at most 1 MiB"));
}

}  // namespace
}  // namespace orch
