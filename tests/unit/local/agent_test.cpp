// orchestrate-agent on its own: usage errors, exit status passthrough, the event file.

#include <gmock/gmock.h>
#include <sys/wait.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class AgentTest : public LocalSiteTest {
 protected:
  // Runs the agent through the shell and returns its exit status.
  int run_agent(const std::string& args) {
    std::string cmd = std::string(kAgentPath) + " " + args + " >" + root_ + "/out 2>&1";
    int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::vector<nlohmann::json> events() {
    std::vector<nlohmann::json> out;
    std::istringstream in(slurp(root_ + "/ev.jsonl"));
    std::string line;
    while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
    return out;
  }
};

TEST_F(AgentTest, BadUsageExitsTwoWithAMessage) {
  EXPECT_EQ(run_agent(""), 2);
  EXPECT_EQ(run_agent("frobnicate"), 2);
  EXPECT_THAT(slurp(root_ + "/out"), HasSubstr("unknown command"));
  EXPECT_EQ(run_agent("run -- true"), 2);
  EXPECT_THAT(slurp(root_ + "/out"), HasSubstr("--events FILE is required"));
  EXPECT_EQ(run_agent("run --events " + root_ + "/ev.jsonl"), 2);
  EXPECT_EQ(run_agent("run --events " + root_ + "/ev.jsonl --lock-fd x -- true"), 2);
}

TEST_F(AgentTest, PassesExitCodeAndWritesEvents) {
  EXPECT_EQ(run_agent("run --events " + root_ + "/ev.jsonl -- sh -c 'echo out; exit 5'"), 5);
  EXPECT_EQ(slurp(root_ + "/out"), "out\n");
  auto ev = events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0]["event"], "start");
  EXPECT_GT(ev[0]["pid"].get<int>(), 1);
  EXPECT_GT(ev[0]["agent_pid"].get<int>(), 1);
  EXPECT_GT(ev[0]["at_ms"].get<long long>(), 0);
  EXPECT_EQ(ev[1]["event"], "exit");
  EXPECT_EQ(ev[1]["exit_code"], 5);
}

TEST_F(AgentTest, ChildKilledBySignalGives128PlusSignal) {
  EXPECT_EQ(run_agent("run --events " + root_ + "/ev.jsonl -- sh -c 'kill -TERM $$'"), 143);
  auto ev = events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1]["signal"], SIGTERM);
  EXPECT_FALSE(ev[1].contains("exit_code"));
}

TEST_F(AgentTest, CommandThatCannotRunExits127) {
  EXPECT_EQ(run_agent("run --events " + root_ + "/ev.jsonl -- " + root_ + "/missing"), 127);
  EXPECT_THAT(slurp(root_ + "/out"), HasSubstr("cannot run the command"));
}

}  // namespace
}  // namespace orch::testing
