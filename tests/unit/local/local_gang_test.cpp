// A gang on the local site (issue 14): one agent per task, each in its own process group, with
// its place in the gang in its environment; one task's failure or one virtual node's death ends
// the attempt for all and names that node.
#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <set>

#include "adapters/local/run_dir.h"
#include "scheduler/model/log_tag.h"
#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// Prints the task's launch variables, one "r<rank> NAME=value" line each.
constexpr const char* kPrintPlace =
    "env | grep -E '^(ORCH_(NODE_RANK|NNODES|TASK_RANK|NTASKS|LOCAL_RANK|MASTER_ADDR|"
    "MASTER_PORT|NODE_NAME)|NODE_RANK|WORLD_SIZE|RANK|LOCAL_RANK|MASTER_ADDR|MASTER_PORT)=' "
    "| sed \"s/^/r$ORCH_TASK_RANK /\"";

class LocalGangTest : public LocalSiteTest {
 protected:
  void SetUp() override {
    LocalSiteTest::SetUp();
    site_ = make_site(4);
  }

  LaunchRequest gang(const std::string& token, const std::string& command, int nodes,
                     int tasks_per_node = 1) {
    LaunchRequest r = request(token, command);
    r.nodes = nodes;
    r.tasks_per_node = tasks_per_node;
    r.heartbeat_s = 0.2;
    r.heartbeat_timeout_s = 2;
    return r;
  }

  // Launches and remembers every task's process group for cleanup.
  LaunchResult launch_gang(const LaunchRequest& r) {
    LaunchResult launched = launch_ok(r);
    local::RunPaths paths = local::run_paths(root_, r.token);
    for (int rank = 1; rank < r.nodes * r.tasks_per_node; ++rank) {
      int pid = task_pid(paths, rank);
      if (pid > 1) pgids_.push_back(pid);
    }
    return launched;
  }

  static int task_pid(const local::RunPaths& paths, int rank) {
    return std::atoi(slurp(local::task_paths(paths, rank).agent_pid).c_str());
  }

  // Every "r<rank> NAME=value" line of the output, as rank -> NAME -> value (after the task's
  // "[node/rank] " tag, which the agent puts before each line of a gang's task).
  std::map<int, std::map<std::string, std::string>> places(const std::vector<std::string>& lines) {
    std::map<int, std::map<std::string, std::string>> out;
    for (const std::string& tagged : lines) {
      const std::string l(strip_log_tag(tagged));
      if (l.size() < 3 || l[0] != 'r') continue;
      auto space = l.find(' '), eq = l.find('=');
      if (space == std::string::npos || eq == std::string::npos) continue;
      out[std::stoi(l.substr(1, space - 1))][l.substr(space + 1, eq - space - 1)] =
          l.substr(eq + 1);
    }
    return out;
  }

  bool all_tasks_dead(const std::string& token, int tasks) {
    local::RunPaths paths = local::run_paths(root_, token);
    for (int rank = 0; rank < tasks; ++rank) {
      auto alive = local::agent_alive(local::task_paths(paths, rank).lock);
      if (!alive.ok() || *alive) return false;
    }
    return true;
  }
};

TEST_F(LocalGangTest, ThreeNodesRunThreeTasksEachWithItsPlace) {
  LaunchResult launched = launch_gang(gang("g-three", kPrintPlace, 3));
  EXPECT_EQ(launched.nodes, (std::vector<std::string>{"loc-n0", "loc-n1", "loc-n2"}));
  std::vector<std::string> lines;
  RunObservation last = wait_exited("g-three", &lines);
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_EQ(last.exit->exit_code, 0);

  auto got = places(lines);
  ASSERT_EQ(got.size(), 3u) << ::testing::PrintToString(lines);
  std::set<std::string> ports;
  for (int rank = 0; rank < 3; ++rank) {
    auto& v = got[rank];
    const std::string r = std::to_string(rank);
    EXPECT_EQ(v["ORCH_NODE_RANK"], r);
    EXPECT_EQ(v["NODE_RANK"], r);
    EXPECT_EQ(v["ORCH_TASK_RANK"], r);
    EXPECT_EQ(v["RANK"], r);
    EXPECT_EQ(v["ORCH_LOCAL_RANK"], "0");
    EXPECT_EQ(v["ORCH_NNODES"], "3");
    EXPECT_EQ(v["WORLD_SIZE"], "3");
    EXPECT_EQ(v["ORCH_MASTER_ADDR"], "127.0.0.1");
    EXPECT_EQ(v["MASTER_ADDR"], "127.0.0.1");
    EXPECT_EQ(v["ORCH_NODE_NAME"], "loc-n" + r);
    ports.insert(v["MASTER_PORT"]);
  }
  EXPECT_EQ(ports.size(), 1u) << "every task meets at the same port";
}

TEST_F(LocalGangTest, TasksPerNodeGiveLocalRanksOnEachNode) {
  launch_gang(gang("g-tpn", kPrintPlace, 2, 2));
  std::vector<std::string> lines;
  RunObservation last = wait_exited("g-tpn", &lines);
  ASSERT_EQ(last.exit->exit_code, 0);
  auto got = places(lines);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[3]["ORCH_NODE_RANK"], "1");
  EXPECT_EQ(got[3]["LOCAL_RANK"], "1");
  EXPECT_EQ(got[3]["ORCH_NODE_NAME"], "loc-n1");
  EXPECT_EQ(got[2]["LOCAL_RANK"], "0");
  EXPECT_EQ(got[0]["WORLD_SIZE"], "4");
  // Each line carries its task's node and global rank (issue 41).
  EXPECT_THAT(lines, ::testing::Contains("[loc-n1/3] r3 ORCH_NODE_RANK=1"));
  EXPECT_THAT(lines, ::testing::Contains("[loc-n0/1] r1 LOCAL_RANK=1"));
  EXPECT_EQ(got[0]["ORCH_NTASKS"], "4");
}

TEST_F(LocalGangTest, OneTaskFailingEndsTheGangWithItsExitAndNode) {
  launch_gang(gang("g-fail", "if [ \"$ORCH_TASK_RANK\" = 1 ]; then exit 3; fi; sleep 30", 3));
  RunObservation last = wait_exited("g-fail");
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_EQ(last.exit->exit_code, 3);
  EXPECT_EQ(last.exit->failed_node, "loc-n1");
  EXPECT_FALSE(last.exit->node_lost);
  EXPECT_EQ(last.exit->detail, "task 1 on loc-n1 failed first");
  EXPECT_TRUE(all_tasks_dead("g-fail", 3)) << "the other tasks are stopped, not left running";
  // The verdict is kept: observed again, the gang ended the same way.
  auto again = site_->observe("g-fail", 0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->exit->failed_node, "loc-n1");
  EXPECT_EQ(again->exit->exit_code, 3);
}

TEST_F(LocalGangTest, AVirtualNodeDyingAloneIsThatNodeLost) {
  launch_gang(gang("g-node", "echo up; sleep 30", 3));
  ASSERT_TRUE(wait_output("g-node", "up"));
  local::RunPaths paths = local::run_paths(root_, "g-node");
  ASSERT_EQ(kill(-task_pid(paths, 2), SIGKILL), 0);  // node 2: its agent and its job
  RunObservation last = wait_exited("g-node");
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_TRUE(last.exit->node_lost);
  EXPECT_EQ(last.exit->cause, ExitCause::node_lost);
  EXPECT_EQ(last.exit->failed_node, "loc-n2");
  EXPECT_TRUE(all_tasks_dead("g-node", 3));
}

TEST_F(LocalGangTest, ATaskWhoseHeartbeatsStopIsItsNodeLost) {
  launch_gang(gang("g-stop", "echo up; sleep 30", 2));
  ASSERT_TRUE(wait_output("g-stop", "up"));
  local::RunPaths paths = local::run_paths(root_, "g-stop");
  ASSERT_EQ(kill(-task_pid(paths, 1), SIGSTOP), 0);  // a hung node: alive, silent
  RunObservation last = wait_exited("g-stop");
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_TRUE(last.exit->node_lost);
  EXPECT_EQ(last.exit->failed_node, "loc-n1");
  EXPECT_THAT(last.exit->detail, HasSubstr("no heartbeat from task 1 on loc-n1"));
  EXPECT_TRUE(all_tasks_dead("g-stop", 2)) << "a stopped task is killed too";
}

TEST_F(LocalGangTest, ATaskHungBeforeItsFirstRecordIsItsNodeLost) {
  launch_gang(gang("g-mute", "echo up; sleep 30", 2));
  ASSERT_TRUE(wait_output("g-mute", "up"));
  local::RunPaths paths = local::run_paths(root_, "g-mute");
  ASSERT_EQ(kill(-task_pid(paths, 1), SIGSTOP), 0);
  // As if the node froze before its agent wrote anything: only its launch (its pid) is known.
  (void)std::remove(local::task_paths(paths, 1).events.c_str());
  RunObservation last = wait_exited("g-mute");
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_TRUE(last.exit->node_lost);
  EXPECT_EQ(last.exit->failed_node, "loc-n1");
  EXPECT_THAT(last.exit->detail, HasSubstr("no heartbeat from task 1 on loc-n1"));
  EXPECT_TRUE(all_tasks_dead("g-mute", 2));
}

TEST_F(LocalGangTest, CancelStopsEveryTask) {
  launch_gang(gang("g-cancel", "echo up; sleep 30", 3));
  ASSERT_TRUE(wait_output("g-cancel", "up"));
  ASSERT_TRUE(site_->cancel("g-cancel").ok());
  RunObservation last = wait_exited("g-cancel");
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_TRUE(all_tasks_dead("g-cancel", 3));
}

TEST_F(LocalGangTest, ALaunchRetriedAfterACrashAdoptsTheGangAndStartsNothingTwice) {
  auto r = gang("g-once", "echo started >> \"$ORCH_RUN_DIR/../../../count\"; sleep 0.5", 3);
  LaunchResult first = launch_gang(r);
  EXPECT_FALSE(first.adopted);
  auto second = site_->launch(r);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_TRUE(second->adopted);
  wait_exited("g-once");
  EXPECT_EQ(slurp(root_ + "/count"), "started\nstarted\nstarted\n");
}

TEST_F(LocalGangTest, MoreNodesThanTheSiteHasIsRefused) {
  auto launched = site_->launch(gang("g-big", "true", 5));
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.error().kind, ErrorKind::invalid);
}

}  // namespace
}  // namespace orch::testing
