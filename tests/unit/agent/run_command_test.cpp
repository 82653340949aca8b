// `orchestrate-agent run` end to end: stdout relayed byte for byte, progress and checkpoint
// records, heartbeats, hang detection, and a reader of our stdout that goes away. (Exit codes,
// signals and leftovers are covered with the local site in tests/unit/local.)

#include <gmock/gmock.h>

#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "tests/unit/agent/agent_test_util.h"

namespace orch::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class RunCommandTest : public TempDirTest {
 protected:
  std::string events_path() const { return dir_ + "/events.jsonl"; }
  std::vector<json> events() const {
    std::vector<json> out;
    std::istringstream in(slurp(events_path()));
    std::string line;
    while (std::getline(in, line)) out.push_back(json::parse(line));
    return out;
  }
  std::vector<json> events_named(const std::string& name) const {
    std::vector<json> out;
    for (const json& e : events()) {
      if (e["event"] == name) out.push_back(e);
    }
    return out;
  }
  // `run --events ... FLAGS -- sh -c 'SCRIPT'`; the exit status.
  int run(const std::string& flags, const std::string& script) {
    return agent("run --events " + events_path() + " " + flags + " -- sh -c '" + script + "'");
  }
};

TEST_F(RunCommandTest, RelaysStdoutByteForByte) {
  std::string data;
  std::mt19937 rng(7);
  for (int i = 0; i < 300'000; ++i) data += static_cast<char>(rng() & 0xff);
  data += "@orchestrate {\"event\":\"progress\",\"step\":1}\nno newline at the end";
  std::ofstream(dir_ + "/data", std::ios::binary) << data;
  EXPECT_EQ(run("", "cat " + dir_ + "/data; echo to-stderr >&2"), 0);
  EXPECT_TRUE(out() == data) << "stdout differs (" << out().size() << " vs " << data.size()
                             << " bytes)";
  EXPECT_EQ(err(), "to-stderr\n");  // stderr is inherited, untouched
}

TEST_F(RunCommandTest, RecordsProgressAndCheckpoints) {
  EXPECT_EQ(run("", R"(echo "epoch 1";
    for s in 1 2 3; do echo "@orchestrate {\"event\":\"progress\",\"step\":$s,\"tokens\":64}"; done;
    echo "@orchestrate {\"event\": \"checkpoint\", \"step\": 3, \"path\": \"/ck/step-3\"}";
    echo "@orchestrate {\"event\":\"progress\",\"step\":4}";
    printf "@orchestrate {\"event\":\"progress\",\"step\":5}"; exit 4)"),
            4);
  std::vector<json> ev = events();
  ASSERT_GE(ev.size(), 5u) << slurp(events_path());
  EXPECT_EQ(ev.front()["event"], "start");
  EXPECT_EQ(ev.back()["event"], "exit");
  EXPECT_EQ(ev.back()["exit_code"], 4);
  // Progress is coalesced (the first at once, then at most one a second, the newest winning);
  // what a checkpoint follows is written before it, and the last step before the exit.
  std::vector<std::int64_t> steps;
  std::vector<std::string> order;
  for (const json& e : ev) {
    order.push_back(e["event"]);
    if (e["event"] == "progress") {
      steps.push_back(e["step"]);
      EXPECT_GT(e["at_ms"].get<std::int64_t>(), 0);
    }
  }
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front(), 1);
  EXPECT_EQ(steps.back(), 5);  // the last line had no newline and still counts
  EXPECT_TRUE(std::is_sorted(steps.begin(), steps.end()));
  auto ck = events_named("checkpoint");
  ASSERT_EQ(ck.size(), 1u);
  EXPECT_EQ(ck[0]["step"], 3);
  EXPECT_EQ(ck[0]["path"], "/ck/step-3");
  auto ck_at = std::find(order.begin(), order.end(), "checkpoint") - order.begin();
  EXPECT_EQ(ev[static_cast<size_t>(ck_at - 1)]["event"], "progress");
  EXPECT_EQ(ev[static_cast<size_t>(ck_at - 1)]["step"], 3);
  EXPECT_THAT(out(), HasSubstr("epoch 1\n@orchestrate {\"event\":\"progress\",\"step\":1,"));
}

TEST_F(RunCommandTest, WritesHeartbeats) {
  EXPECT_EQ(run("--heartbeat-s 0.1", R"(echo "@orchestrate {\"event\":\"progress\",\"step\":1}";
    sleep 0.6)"),
            0);
  auto hb = events_named("heartbeat");
  ASSERT_GE(hb.size(), 2u) << slurp(events_path());
  auto progress = events_named("progress");
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(hb.back()["last_progress_ms"], progress[0]["at_ms"]);
  EXPECT_GE(hb.back()["at_ms"].get<std::int64_t>(), progress[0]["at_ms"].get<std::int64_t>());
}

TEST_F(RunCommandTest, ReportsAHangOnceAndLeavesTheJobRunning) {
  int status = -1;
  std::thread t([&] {
    status = run("--heartbeat-s 0 --hang-after-s 1",
                 R"(echo "@orchestrate {\"event\":\"progress\",\"step\":1}";
                    while [ ! -f )" +
                     dir_ + R"(/go ]; do sleep 0.05; done; echo done)");
  });
  bool hung = eventually([&] { return !events_named("hang").empty(); });
  std::ofstream(dir_ + "/go") << "go\n";
  t.join();
  ASSERT_TRUE(hung) << slurp(events_path());
  EXPECT_EQ(status, 0);  // the agent reported the hang and did not kill the job
  auto hang = events_named("hang");
  ASSERT_EQ(hang.size(), 1u);
  EXPECT_GE(hang[0]["silent_s"].get<double>(), 1.0);
  EXPECT_THAT(err(), HasSubstr("orchestrate-agent: no progress line for 1 s (hang_after)"));
  EXPECT_THAT(out(), HasSubstr("done"));
  EXPECT_TRUE(events_named("heartbeat").empty());
}

TEST_F(RunCommandTest, NoHangWhenDisabledOrWhileProgressFlows) {
  EXPECT_EQ(run("--hang-after-s 0", "sleep 1.2"), 0);
  EXPECT_TRUE(events_named("hang").empty());
  EXPECT_EQ(run("--hang-after-s 1", R"(for s in 1 2 3 4 5 6; do
      echo "@orchestrate {\"event\":\"progress\",\"step\":$s}"; sleep 0.25; done)"),
            0);
  EXPECT_TRUE(events_named("hang").empty()) << slurp(events_path());
}

TEST_F(RunCommandTest, AReaderThatGoesAwayDoesNotKillTheAgentOrBlockTheJob) {
  std::string cmd = std::string(kAgentPath) + " run --events " + events_path() +
                    " -- sh -c 'yes | head -c 2000000; exit 3' | head -c 10 >/dev/null";
  std::system(cmd.c_str());
  auto exits = events_named("exit");
  ASSERT_EQ(exits.size(), 1u) << slurp(events_path());
  EXPECT_EQ(exits[0]["exit_code"], 3);
}

TEST_F(RunCommandTest, BadFlagValuesExitTwo) {
  EXPECT_EQ(run("--heartbeat-s soon", "true"), 2);
  EXPECT_THAT(err(), HasSubstr("--heartbeat-s wants seconds"));
  EXPECT_EQ(run("--hang-after-s -1", "true"), 2);
  EXPECT_THAT(err(), HasSubstr("--hang-after-s wants seconds"));
  EXPECT_EQ(run("--hang-after-s", "true"), 2);
  EXPECT_EQ(run("--grace-ms 1.5", "true"), 2);
}

}  // namespace
}  // namespace orch::testing
