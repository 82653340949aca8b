// `orchestrate-agent run --io-stall-after-s` end to end (issue 43, I/O stalls): a job that
// announces a save and then hangs in it gets an io_stall record naming the path, the mount and
// the filesystem, heartbeats that repeat it, and a checkpoint record that carries save_s.

#include <gmock/gmock.h>

#include <nlohmann/json.hpp>

#include "tests/unit/agent/agent_test_util.h"

namespace orch::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class RunSaveWatchTest : public TempDirTest {
 protected:
  std::vector<json> events_named(const std::string& name) const {
    std::vector<json> out;
    std::istringstream in(slurp(dir_ + "/events.jsonl"));
    for (std::string line; std::getline(in, line);) {
      json e = json::parse(line);
      if (e["event"] == name) out.push_back(e);
    }
    return out;
  }
  int run(const std::string& flags, const std::string& script) {
    return agent("run --events " + dir_ + "/events.jsonl --node-name n7 " + flags + " -- sh -c '" +
                 script + "'");
  }
};

TEST_F(RunSaveWatchTest, ASaveThatOutlastsTheBoundIsAnIoStallNamingPathMountAndFilesystem) {
  const std::string path = dir_ + "/step-4.pt";
  EXPECT_EQ(run("--heartbeat-s 0.2 --io-stall-after-s 0.5",
                R"(echo "@orchestrate {\"event\":\"checkpoint_start\",\"step\":4,\"path\":\")" +
                    path + R"(\"}"; sleep 1.5;
                   echo "@orchestrate {\"event\":\"checkpoint\",\"step\":4,\"path\":\")" +
                    path + R"(\"}")"),
            0);
  auto start = events_named("checkpoint_start");
  ASSERT_EQ(start.size(), 1u);
  EXPECT_EQ(start[0]["path"], path);
  auto stall = events_named("io_stall");
  ASSERT_EQ(stall.size(), 1u) << slurp(dir_ + "/events.jsonl");
  EXPECT_EQ(stall[0]["step"], 4);
  EXPECT_EQ(stall[0]["path"], path);
  EXPECT_EQ(stall[0]["node"], "n7");
  EXPECT_DOUBLE_EQ(stall[0]["after_s"].get<double>(), 0.5);
  EXPECT_GE(stall[0]["running_s"].get<double>(), 0.5);
  EXPECT_LT(stall[0]["running_s"].get<double>(), 1.5);  // raised while the save still ran
  EXPECT_FALSE(stall[0]["mount"].get<std::string>().empty());
  EXPECT_FALSE(stall[0]["fs"].get<std::string>().empty());
  bool repeated = false;
  for (const json& hb : events_named("heartbeat")) {
    if (hb.contains("stall")) repeated = hb["stall"]["path"] == path;
  }
  EXPECT_TRUE(repeated) << slurp(dir_ + "/events.jsonl");
  auto ck = events_named("checkpoint");
  ASSERT_EQ(ck.size(), 1u);
  EXPECT_GE(ck[0]["save_s"].get<double>(), 1.4);
  EXPECT_THAT(err(), HasSubstr("the save of step 4 has run"));
}

TEST_F(RunSaveWatchTest, AQuickSaveIsNoStallAndWithoutABoundNothingIsRaised) {
  EXPECT_EQ(
      run("--io-stall-after-s 5",
          R"(echo "@orchestrate {\"event\":\"checkpoint_start\",\"step\":1,\"path\":\"/c/1\"}";
                   echo "@orchestrate {\"event\":\"checkpoint\",\"step\":1,\"path\":\"/c/1\"}")"),
      0);
  EXPECT_TRUE(events_named("io_stall").empty());
  ASSERT_EQ(events_named("checkpoint").size(), 1u);
  EXPECT_TRUE(events_named("checkpoint")[0].contains("save_s"));
  EXPECT_EQ(
      run("",
          R"(echo "@orchestrate {\"event\":\"checkpoint_start\",\"step\":2,\"path\":\"/c/2\"}";
                   sleep 0.3)"),
      0);
  EXPECT_TRUE(events_named("io_stall").empty());
}

TEST_F(RunSaveWatchTest, ABadBoundIsAUsageError) {
  EXPECT_EQ(run("--io-stall-after-s soon", "true"), 2);
  EXPECT_THAT(err(), HasSubstr("--io-stall-after-s wants seconds"));
}

}  // namespace
}  // namespace orch::testing
