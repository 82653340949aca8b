// `orchestrate-agent run` as one task of a gang, end to end (issue 14): the place from flags or
// from srun's variables exported to the command, refused before the command runs when it does
// not hold, the events file name's patterns, records that say whose they are, and whole lines
// when the tasks of a gang share one output file.

#include <gmock/gmock.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "scheduler/model/log_tag.h"
#include "tests/unit/agent/agent_test_util.h"

namespace orch::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// Node 1 of 2, 4 tasks a node, local rank 3: task 7 of 8.
const std::string kPlace =
    "--node-rank 1 --nnodes 2 --tasks-per-node 4 --local-rank 3 --master-addr h0 "
    "--master-port 25000";
// The same place as srun gives it.
const std::string kSlurmEnv =
    "SLURM_NODEID=1 SLURM_NNODES=2 SLURM_LOCALID=3 SLURM_NTASKS=8 SLURM_PROCID=7";

class RunGangTest : public TempDirTest {
 protected:
  std::string events_path() const { return dir_ + "/events.jsonl"; }
  std::string marker() const { return dir_ + "/ran"; }
  std::vector<json> events(const std::string& path) const {
    std::vector<json> out;
    std::istringstream in(slurp(path));
    std::string line;
    while (std::getline(in, line)) out.push_back(json::parse(line));
    return out;
  }
  // `[env ENV] run --events ... FLAGS -- sh -c 'SCRIPT'`; the exit status.
  int run(const std::string& env, const std::string& flags, const std::string& script) {
    return agent_env(env,
                     "run --events " + events_path() + " " + flags + " -- sh -c '" + script + "'");
  }
  // The command's environment as `env` printed it (a gang's task: each line tagged).
  std::map<std::string, std::string> printed_env() const {
    std::map<std::string, std::string> vars;
    std::istringstream in(out());
    std::string tagged;
    while (std::getline(in, tagged)) {
      const std::string line(strip_log_tag(tagged));
      auto eq = line.find('=');
      if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return vars;
  }
  void expect_task_seven(const std::map<std::string, std::string>& env) {
    const std::map<std::string, std::string> want = {
        {"ORCH_NODE_RANK", "1"},       {"ORCH_NNODES", "2"},
        {"ORCH_TASK_RANK", "7"},       {"ORCH_NTASKS", "8"},
        {"ORCH_LOCAL_RANK", "3"},      {"ORCH_MASTER_ADDR", "h0"},
        {"ORCH_MASTER_PORT", "25000"}, {"NODE_RANK", "1"},
        {"WORLD_SIZE", "8"},           {"RANK", "7"},
        {"LOCAL_RANK", "3"},           {"MASTER_ADDR", "h0"},
        {"MASTER_PORT", "25000"}};
    for (const auto& [name, value] : want) {
      auto it = env.find(name);
      ASSERT_NE(it, env.end()) << name << " not exported:\n" << out();
      EXPECT_EQ(it->second, value) << name;
    }
  }
};

TEST_F(RunGangTest, ExportsAnExplicitPlaceToTheCommand) {
  ASSERT_EQ(run("", kPlace + " --node-name n1", "env"), 0) << err();
  auto env = printed_env();
  expect_task_seven(env);
  EXPECT_EQ(env["ORCH_NODE_NAME"], "n1");
}

TEST_F(RunGangTest, ReadsThePlaceFromSrunsVariables) {
  ASSERT_EQ(run(kSlurmEnv + " SLURMD_NODENAME=sn1",
                "--place-from slurm --master-addr h0 --master-port 25000", "env"),
            0)
      << err();
  auto env = printed_env();
  expect_task_seven(env);
  EXPECT_EQ(env["ORCH_NODE_NAME"], "sn1");  // the node's name defaults to Slurm's
  EXPECT_EQ(events(events_path()).at(0)["node"], "sn1");
}

TEST_F(RunGangTest, ExportsTheNodeNameWithoutAPlace) {
  ASSERT_EQ(run("-u SLURMD_NODENAME ORCH_NODE_NAME=virt3", "", "env"), 0) << err();
  auto env = printed_env();
  EXPECT_EQ(env["ORCH_NODE_NAME"], "virt3");
  EXPECT_EQ(env.count("ORCH_TASK_RANK"), 0u);
}

TEST_F(RunGangTest, RefusesSrunVariablesThatDoNotHoldBeforeRunningTheCommand) {
  const std::string flags = "--place-from slurm --master-addr h0 --master-port 25000";
  const std::string touch = "touch " + marker();
  // Uneven tasks per node, a task out of block order, a variable missing.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"SLURM_NODEID=1 SLURM_NNODES=2 SLURM_LOCALID=0 SLURM_NTASKS=3 SLURM_PROCID=2",
       "SLURM_NTASKS 3 is not a multiple of SLURM_NNODES 2"},
      {"SLURM_NODEID=1 SLURM_NNODES=2 SLURM_LOCALID=0 SLURM_NTASKS=4 SLURM_PROCID=1",
       "SLURM_PROCID 1 is not"},
      {"-u SLURM_NODEID SLURM_NNODES=2 SLURM_LOCALID=0 SLURM_NTASKS=4 SLURM_PROCID=1",
       "SLURM_NODEID is not set"}};
  for (const auto& [env, message] : cases) {
    EXPECT_EQ(run(env, flags, touch), 2) << env;
    EXPECT_THAT(err(), HasSubstr("orchestrate-agent: " + message));
    EXPECT_THAT(err(), Not(HasSubstr("usage:")));  // the flags were right; srun's place is not
    EXPECT_FALSE(std::filesystem::exists(marker())) << env;
    EXPECT_FALSE(std::filesystem::exists(events_path())) << env;  // nothing recorded
  }
}

TEST_F(RunGangTest, PartialOrMixedPlaceFlagsAreUsageErrors) {
  const std::string touch = "touch " + marker();
  EXPECT_EQ(run("", "--node-rank 0", touch), 2);
  EXPECT_THAT(err(), HasSubstr("--nnodes is missing"));
  EXPECT_EQ(
      run("", "--node-rank 0 --nnodes 1 --tasks-per-node 1 --local-rank 0 --master-addr h", touch),
      2);
  EXPECT_THAT(err(), HasSubstr("--master-port is missing"));
  EXPECT_EQ(run("", kPlace + " --place-from slurm", touch), 2);
  EXPECT_THAT(err(), HasSubstr("--place-from slurm and --node-rank do not go together"));
  EXPECT_EQ(run("",
                "--node-rank 2 --nnodes 2 --tasks-per-node 1 --local-rank 0 --master-addr h "
                "--master-port 1",
                touch),
            2);
  EXPECT_THAT(err(), HasSubstr("--node-rank: task place: node_rank is 2, must be 0 to 1"));
  EXPECT_THAT(err(), HasSubstr("usage:"));
  EXPECT_FALSE(std::filesystem::exists(marker()));
}

TEST_F(RunGangTest, EventsPathTakesTheTaskAndNodeRank) {
  ASSERT_EQ(agent("run --events " + dir_ + "/ev-%t-%n-%%.jsonl " + kPlace + " -- true"), 0)
      << err();
  EXPECT_EQ(events(dir_ + "/ev-7-1-%.jsonl").size(), 2u);
  ASSERT_EQ(agent("run --events " + dir_ + "/alone-%t-%n.jsonl -- true"), 0) << err();
  EXPECT_EQ(events(dir_ + "/alone-0-0.jsonl").size(), 2u);
  EXPECT_EQ(agent("run --events " + dir_ + "/ev-%q.jsonl -- touch " + marker()), 2);
  EXPECT_THAT(err(), HasSubstr("--events: '%q' is not a pattern"));
  EXPECT_FALSE(std::filesystem::exists(marker()));
}

TEST_F(RunGangTest, RecordsSayWhoseTheyAre) {
  ASSERT_EQ(run("", kPlace + " --node-name n1 --heartbeat-s 0.1", "sleep 0.35; exit 3"), 3);
  std::vector<json> ev = events(events_path());
  ASSERT_GE(ev.size(), 3u) << slurp(events_path());
  // The new fields come after the documented ones, which keep their order.
  EXPECT_EQ(slurp(events_path()).rfind("{\"event\":\"start\",\"pid\":", 0), 0u);
  EXPECT_EQ(ev.front()["node"], "n1");
  EXPECT_EQ(ev.front()["task_rank"], 7);
  EXPECT_EQ(ev.front()["node_rank"], 1);
  EXPECT_EQ(ev.front()["local_rank"], 3);
  int heartbeats = 0;
  for (const json& e : ev) {
    if (e["event"] != "heartbeat") continue;
    ++heartbeats;
    EXPECT_EQ(e["node"], "n1");
    EXPECT_EQ(e["task_rank"], 7);
  }
  EXPECT_GE(heartbeats, 1);
  EXPECT_EQ(ev.back()["event"], "exit");
  EXPECT_EQ(ev.back()["exit_code"], 3);
  EXPECT_EQ(ev.back()["node"], "n1");
  EXPECT_EQ(ev.back()["task_rank"], 7);
  EXPECT_FALSE(ev.back().contains("node_rank"));

  // A task alone: the node, and no ranks.
  std::filesystem::remove(events_path());
  ASSERT_EQ(run("", "--node-name n2", "true"), 0);
  ev = events(events_path());
  ASSERT_EQ(ev.size(), 2u);
  for (const json& e : ev) {
    EXPECT_EQ(e["node"], "n2");
    EXPECT_FALSE(e.contains("task_rank")) << e.dump();
  }
}

TEST_F(RunGangTest, TasksSharingAnOutputFileWriteWholeLines) {
  // Two tasks append to one file, as the local site runs them; each writes its lines in three
  // pieces with pauses between, which the relay reads (and would pass on) separately.
  constexpr int kLines = 40;
  const std::string log = dir_ + "/output.log";
  auto task = [&](int rank) {
    return std::string(kAgentPath) + " run --events " + dir_ +
           "/ev-%t.jsonl --heartbeat-s 0 --node-name n0 --node-rank 0 --nnodes 1 "
           "--tasks-per-node 2 --local-rank " +
           std::to_string(rank) +
           " --master-addr 127.0.0.1 --master-port 25000 -- sh -c '"
           "i=0; while [ $i -lt " +
           std::to_string(kLines) +
           " ]; do printf \"task%s-line%s-\" $RANK $i; sleep 0.002; printf \"middle-\"; "
           "sleep 0.002; printf \"end\\n\"; i=$((i+1)); done'"
           " >>" +
           log + " 2>>" + dir_ + "/stderr";
  };
  const std::string both = "(" + task(0) + ") & (" + task(1) + ") & wait";
  ASSERT_EQ(std::system(both.c_str()), 0) << err();
  std::istringstream in(slurp(log));
  std::string line;
  // Each line whole, and tagged with its task's node and rank (agents/line_holder.h).
  const std::regex whole(R"(\[n0/([01])\] task\1-line([0-9]+)-middle-end)");
  int next[2] = {0, 0};
  while (std::getline(in, line)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, whole)) << "a cut line: '" << line << "'";
    int rank = std::stoi(m[1]);
    EXPECT_EQ(std::stoi(m[2]), next[rank]++);  // each task's lines in order
  }
  EXPECT_EQ(next[0], kLines);
  EXPECT_EQ(next[1], kLines);
}

// A partial line is not held for ever (a prompt, a progress bar): it goes as it is after a
// second, and at the end.
TEST_F(RunGangTest, APartialLineOfAGangTaskGoesOutAfterASecondAndAtTheEnd) {
  const std::string go = dir_ + "/go";
  const auto start = std::chrono::steady_clock::now();
  int status = -1;
  std::thread t([&] {
    status = run("",
                 "--node-name n0 --node-rank 0 --nnodes 1 --tasks-per-node 2 --local-rank 0 "
                 "--master-addr h --master-port 1",
                 "printf prompt; while [ ! -f " + go + " ]; do sleep 0.02; done; printf \" done\"");
  });
  bool shown = eventually([&] { return out() == "[n0/0] prompt"; });
  const auto waited = std::chrono::steady_clock::now() - start;
  std::ofstream(go) << "go\n";
  t.join();
  EXPECT_TRUE(shown) << out();
  EXPECT_GE(waited, std::chrono::milliseconds(1000));  // held for a second from its first byte
  EXPECT_EQ(status, 0);
  // Tagged once at its start; the rest of the line is not tagged again, and the end adds the
  // newline the job did not write.
  EXPECT_EQ(out(), "[n0/0] prompt done\n");
}

// A gang's task tags its stdout and its stderr with "[node/rank] " (rank: the task's global
// rank), while the agent still reads the job's own protocol lines; a task alone is not tagged.
TEST_F(RunGangTest, AGangTasksLinesAreTaggedWithItsNodeAndRank) {
  const std::string script =
      "echo hello; echo oops >&2; "
      "echo \"@orchestrate {\\\"event\\\":\\\"progress\\\",\\\"step\\\":7}\"; "
      "printf tail";
  ASSERT_EQ(run("", "--heartbeat-s 0 --node-name alpha-n1 " + kPlace, script), 0) << err();
  EXPECT_EQ(out(),
            "[alpha-n1/7] hello\n"
            "[alpha-n1/7] @orchestrate {\"event\":\"progress\",\"step\":7}\n"
            "[alpha-n1/7] tail\n");
  EXPECT_EQ(err(), "[alpha-n1/7] oops\n");
  bool progress = false;
  for (const json& e : events(events_path())) progress = progress || e["event"] == "progress";
  EXPECT_TRUE(progress) << slurp(events_path());

  ASSERT_EQ(run("", "--heartbeat-s 0 --node-name alpha-n1", script), 0) << err();
  EXPECT_EQ(out(), "hello\n@orchestrate {\"event\":\"progress\",\"step\":7}\ntail");
  EXPECT_EQ(err(), "oops\n");
}

// A node name the tag cannot carry is written as "?"; a command that cannot run says so in a
// tagged line.
TEST_F(RunGangTest, AnUnusableNodeNameIsTaggedAsAQuestionMark) {
  EXPECT_EQ(agent("run --events " + events_path() + " --heartbeat-s 0 --node-name 'a b' " + kPlace +
                  " -- /no/such/command"),
            127);
  EXPECT_THAT(err(), ::testing::StartsWith("[?/7] orchestrate-agent: cannot run the command"));
}

}  // namespace
}  // namespace orch::testing
