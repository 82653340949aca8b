// The completion scripts, generated from the CLI11 tree of the client commands: bash accepts the
// script, and sourcing it completes subcommands and options at every level. (zsh is checked
// with `zsh -n` when it is installed.)

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
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
  // `orchestrate` itself is a shell function standing in for the binary's __complete: it
  // records its arguments in calls_ and knows jobs 7 and 8, clusters alpha and beta, nodes a-n0
  // and a-n1.
  std::string complete(const std::string& line) {
    calls_ = ::testing::TempDir() + "/completion-calls-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::remove(calls_.c_str());
    const std::string stub =
        "orchestrate() { echo \"$*\" >> " + sh_quote(calls_) +
        "; case \"$*\" in *'__complete jobs') echo '7 8' ;; *'__complete clusters') echo 'alpha "
        "beta' ;; *'__complete nodes') echo 'a-n0 a-n1' ;; esac; }; ";
    const std::string cmd = stub + "source " + sh_quote(script("bash")) + " && COMP_WORDS=(" +
                            line +
                            ") && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) && _orchestrate && "
                            "echo \"${COMPREPLY[*]}\"";
    auto r = shell("bash -c " + sh_quote(cmd) + " 2>&1");
    EXPECT_EQ(r.status, 0) << r.out;
    if (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }

  // What the stand-in binary was asked, one call per line.
  std::string calls() {
    std::ifstream in(calls_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  CLI::App app_{"test", "orchestrate"};
  std::string config_;
  std::string calls_;
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

TEST_F(Completion, BashCompletesJobIdsClustersAndNodesFromTheServer) {
  EXPECT_EQ(complete("orchestrate job show ''"), "7 8");
  EXPECT_EQ(calls(), "__complete jobs\n");
  EXPECT_EQ(complete("orchestrate job cancel 7 ''"), "7 8");  // every ID of the list
  EXPECT_EQ(complete("orchestrate plan ''"), "7 8");
  EXPECT_EQ(complete("orchestrate cluster drain a"), "alpha");
  EXPECT_EQ(complete("orchestrate job list --cluster b"), "beta");
  EXPECT_EQ(complete("orchestrate node quarantine alpha ''"), "a-n0 a-n1");
  EXPECT_EQ(complete("orchestrate cluster probes alpha --node a-n1"), "a-n1");
  EXPECT_EQ(complete("orchestrate data replicate --job ''"), "7 8");
}

TEST_F(Completion, BashAsksTheServerTheCommandLineNames) {
  EXPECT_EQ(complete("orchestrate --server http://h:1 job logs ''"), "7 8");
  EXPECT_EQ(calls(), "--server http://h:1 __complete jobs\n");
}

TEST_F(Completion, BashCompletesFixedValuesWithoutAskingTheServer) {
  EXPECT_EQ(complete("orchestrate job list --state r"), "running resuming");
  EXPECT_EQ(complete("orchestrate node list --state ''"), "active quarantined retired");
  EXPECT_EQ(complete("orchestrate -o j"), "json");
  EXPECT_EQ(complete("orchestrate token create alice --role ''"), "viewer user operator admin");
  EXPECT_EQ(calls(), "");
}

TEST_F(Completion, BashSkipsOptionValuesWhenCountingArguments) {
  // --attempt's value is not the ID; a value with nothing known leaves file names to bash.
  EXPECT_EQ(complete("orchestrate job logs --attempt 2 ''"), "7 8");
  EXPECT_EQ(complete("orchestrate job submit --set ''"), "");
  EXPECT_EQ(complete("orchestrate job show 7 ''"), "");  // one ID only
  EXPECT_EQ(complete("orchestrate __"), "");             // the hidden command is not offered
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
      "compdef() { :; }; orchestrate() { [[ \"$*\" == *'__complete jobs' ]] && print '7 8'; }; "
      "source " +
      sh_quote(script("zsh")) +
      "; words=(orchestrate job ''); CURRENT=3; _orchestrate; "
      "words=(orchestrate job submit ''); CURRENT=4; _orchestrate; "
      "words=(orchestrate job list --s); CURRENT=4; _orchestrate; "
      "words=(orchestrate job cancel 7 ''); CURRENT=5; _orchestrate; "
      "words=(orchestrate job list --state ''); CURRENT=5; _orchestrate";
  r = shell("zsh -f -c " + sh_quote(driver) + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out,
            "submit list show logs explain cancel\n"
            "files\n"
            "--ca --cluster --cursor --group --help --limit --output --owner --server --state "
            "--team -h -o\n"
            "7 8\n"
            "pending placed running resuming succeeded failed cancelled staging\n");
}

TEST_F(Completion, OtherShellsGetNothing) {
  EXPECT_EQ(completion_script(app_, "fish", "orchestrate"), "");
}

}  // namespace
}  // namespace orch
