// The completion scripts, generated from the CLI11 tree of the client commands: bash accepts the
// script, and sourcing it completes subcommands and options at every level. (zsh is checked
// with `zsh -n` when it is installed.)

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cli/client_cli.h"
#include "cli/completion.h"
#include "tests/unit/cli/shell_run.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using testing::sh_quote;
using testing::shell;

class Completion : public ::testing::Test {
 protected:
  void SetUp() override {
    app_.require_subcommand(1);
    add_client_commands(app_);
    app_.add_subcommand("serve", "the server")->add_option("--config", config_);
  }
  std::string script(const std::string& shell_name) {
    // One file per test: ctest runs the tests of this suite in parallel processes, and a
    // script another test is rewriting cannot be sourced.
    const std::string path = ::testing::TempDir() + "/completion-" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name() + "." +
                             shell_name;
    std::ofstream(path) << completion_script(app_, shell_name, "orchestrate");
    return path;
  }
  // What bash offers for the command line `line` (the last word is the one being completed).
  std::string complete(const std::string& line) {
    const std::string cmd = "source " + sh_quote(script("bash")) + " && COMP_WORDS=(" + line +
                            ") && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) && _orchestrate && "
                            "echo \"${COMPREPLY[*]}\"";
    auto r = shell("bash -c " + sh_quote(cmd) + " 2>&1");
    EXPECT_EQ(r.status, 0) << r.out;
    if (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }

  CLI::App app_{"test", "orchestrate"};
  std::string config_;
};

TEST_F(Completion, BashAcceptsTheScript) {
  auto r = shell("bash -n " + sh_quote(script("bash")) + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(completion_script(app_, "bash", "orchestrate"),
              HasSubstr("complete -o default -F _orchestrate orchestrate"));
}

TEST_F(Completion, BashCompletesSubcommandsAtEveryLevel) {
  EXPECT_EQ(complete("orchestrate jo"), "job");
  EXPECT_EQ(complete("orchestrate se"), "secret serve");
  EXPECT_EQ(complete("orchestrate ser"), "serve");
  EXPECT_THAT(complete("orchestrate ''"), HasSubstr("cluster job"));
  EXPECT_EQ(complete("orchestrate job su"), "submit");
  EXPECT_EQ(complete("orchestrate job s"), "submit show");  // in the order of `--help`
  EXPECT_EQ(complete("orchestrate cluster out"), "outage");
  // Options given before the subcommand do not hide it.
  EXPECT_EQ(complete("orchestrate --server http://x:1 job li"), "list");
}

TEST_F(Completion, BashCompletesOptionsWithThoseOfTheEnclosingCommands) {
  EXPECT_EQ(complete("orchestrate job list --st"), "--state");
  EXPECT_EQ(complete("orchestrate job list --se"), "--server");
  EXPECT_EQ(complete("orchestrate serve --co"), "--config");
  EXPECT_EQ(complete("orchestrate serve --se"), "");  // serve does not fall through
  EXPECT_EQ(complete("orchestrate --ver"), "");       // not defined on this test's app
}

TEST_F(Completion, BashLeavesFileNamesToTheDefault) {
  // Nothing to offer after `job submit`: `complete -o default` completes file names.
  EXPECT_EQ(complete("orchestrate job submit ex"), "");
}

TEST_F(Completion, ZshScriptIsWellFormed) {
  const std::string text = completion_script(app_, "zsh", "orchestrate");
  EXPECT_THAT(text, ::testing::StartsWith("#compdef orchestrate\n"));
  EXPECT_THAT(text, HasSubstr("\"job\") echo \""));
  if (shell("command -v zsh >/dev/null").status != 0) GTEST_SKIP() << "zsh is not installed";
  auto r = shell("zsh -n " + sh_quote(script("zsh")) + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  // Drive the completer with compadd and _files stubbed out: what it would offer.
  const std::string driver =
      "compadd() { shift; print -r -- \"$@\"; }; _files() { print files; }; "
      "compdef() { :; }; source " +
      sh_quote(script("zsh")) +
      "; words=(orchestrate job ''); CURRENT=3; _orchestrate; "
      "words=(orchestrate job submit ''); CURRENT=4; _orchestrate; "
      "words=(orchestrate job list --s); CURRENT=4; _orchestrate";
  r = shell("zsh -f -c " + sh_quote(driver) + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out,
            "submit list show logs explain cancel\n"
            "files\n"
            "--cluster --cursor --help --limit --output --server --state -h -o\n");
}

TEST_F(Completion, OtherShellsGetNothing) {
  EXPECT_EQ(completion_script(app_, "fish", "orchestrate"), "");
}

}  // namespace
}  // namespace orch
