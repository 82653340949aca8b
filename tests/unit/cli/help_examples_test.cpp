// Issue 42: every help text of the whole command tree (the one the executable parses) ends with
// an example, every option with a fixed set of values lists them, and a bare `orchestrate`
// prints the command list.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/app.h"
#include "cli/help_examples.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

struct Command {
  std::string path;  // "job submit"; "" for the program
  CLI::App* app;
};

// Every command shown in help (hidden ones, group "", are not), depth first.
void walk(CLI::App* app, const std::string& path, std::vector<Command>& out) {
  out.push_back({path, app});
  for (CLI::App* sub : app->get_subcommands([](CLI::App* s) { return !s->get_group().empty(); })) {
    walk(sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
  }
}

class HelpTexts : public ::testing::Test {
 protected:
  void SetUp() override {
    build_app(app_);
    walk(&app_, "", commands_);
  }
  CLI::App app_{"orchestrate: test", "orchestrate"};
  std::vector<Command> commands_;
};

TEST_F(HelpTexts, TheTreeIsTheWholeCommandLine) {
  std::vector<std::string> paths;
  for (const Command& c : commands_) paths.push_back(c.path);
  for (const char* p : {"job submit", "job cancel", "cluster list", "serve", "demo", "simulate",
                        "completion", "data transfers", "token create"}) {
    EXPECT_THAT(paths, ::testing::Contains(p));
  }
  EXPECT_THAT(paths, ::testing::Not(::testing::Contains("__complete")));
  EXPECT_GT(paths.size(), 50u);
}

TEST_F(HelpTexts, EveryCommandsHelpEndsWithAnExampleOfItself) {
  for (const Command& c : commands_) {
    const std::string help = c.app->help();
    const bool leaf = c.app->get_subcommands([](CLI::App*) { return true; }).empty();
    if (leaf) {
      EXPECT_FALSE(help_example(c.path).empty()) << "no example for `orchestrate " << c.path << "`";
    }
    EXPECT_THAT(help, ::testing::ContainsRegex("Examples?:\n  ")) << c.path;
    // A leaf's example runs that very command.
    if (leaf && c.path != "completion") {
      EXPECT_THAT(help, HasSubstr("  orchestrate " + c.path)) << help;
    }
  }
}

TEST_F(HelpTexts, EveryOptionWithAFixedSetOfValuesListsThem) {
  // The options whose values are a closed set, wherever they appear: each shows {a,b,...}.
  const std::vector<std::string> enums = {"--output", "--role", "--policy", "SHELL", "KIND"};
  int checked = 0;
  for (const Command& c : commands_) {
    for (const CLI::Option* opt : c.app->get_options()) {
      const std::string name = opt->get_positional() ? opt->get_name(true) : opt->get_name();
      bool is_enum = std::find(enums.begin(), enums.end(), name) != enums.end();
      // --state is a job state in `job list`, a node's or a ticket's standing in `node list` and
      // `ticket list`; the global one and serve's are directories.
      if (name == "--state" && c.path.size() > 5 && c.path.substr(c.path.size() - 5) == " list") {
        is_enum = true;
      }
      if (!is_enum) continue;
      ++checked;
      EXPECT_THAT(opt->get_type_name(), HasSubstr(":{")) << c.path << " " << name;
      EXPECT_THAT(c.app->help(), HasSubstr(opt->get_type_name())) << c.path << " " << name;
    }
  }
  EXPECT_GE(checked, 6);
}

TEST_F(HelpTexts, JobListStateListsEveryJobState) {
  CLI::App* list = app_.get_subcommand("job")->get_subcommand("list");
  const std::string help = list->help();
  for (const char* state : {"pending", "placed", "running", "resuming", "succeeded", "failed",
                            "cancelled", "staging"}) {
    EXPECT_THAT(help, HasSubstr(state));
  }
}

TEST_F(HelpTexts, TheProgramsHelpListsTheCommandsWithExamples) {
  const std::string help = app_.help();
  for (const char* cmd : {"cluster", "job", "serve", "demo", "completion"}) {
    EXPECT_THAT(help, HasSubstr(std::string("\n  ") + cmd)) << help;
  }
  EXPECT_THAT(help, HasSubstr("orchestrate job submit examples/jobs/toy.yaml --follow"));
}

}  // namespace
}  // namespace orch
