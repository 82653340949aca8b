// judge_gang: how a gang's tasks add up to one attempt (scheduler/model/gang_verdict.h).
#include "scheduler/model/gang_verdict.h"

#include <gmock/gmock.h>

#include <csignal>

namespace orch {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kNow = 1'000'000;
constexpr std::int64_t kTimeout = 30'000;

TaskView running(int rank, const std::string& node, std::int64_t last_record_ms = kNow - 1'000) {
  TaskView t;
  t.rank = rank;
  t.node = node;
  t.alive = true;
  t.last_record_ms = last_record_ms;
  return t;
}

TaskView exited(int rank, const std::string& node, std::optional<int> code,
                std::optional<int> signal, std::int64_t at_ms) {
  TaskView t;
  t.rank = rank;
  t.node = node;
  t.exited = true;
  t.exit_code = code;
  t.signal = signal;
  t.exit_at_ms = at_ms;
  t.last_record_ms = at_ms;
  return t;
}

TaskView vanished(int rank, const std::string& node, std::int64_t last_record_ms) {
  TaskView t;
  t.rank = rank;
  t.node = node;
  t.last_record_ms = last_record_ms;
  return t;
}

TEST(GangVerdict, AllRunningIsRunning) {
  GangVerdict v = judge_gang({running(0, "n0"), running(1, "n1")}, kNow, kTimeout);
  EXPECT_EQ(v.phase, RunPhase::running);
  EXPECT_FALSE(v.exit.has_value());
}

TEST(GangVerdict, SomeDoneAndOthersStillRunningIsRunning) {
  GangVerdict v =
      judge_gang({exited(0, "n0", 0, std::nullopt, kNow - 5), running(1, "n1")}, kNow, kTimeout);
  EXPECT_EQ(v.phase, RunPhase::running);
}

TEST(GangVerdict, EveryTaskExitingZeroSucceeds) {
  GangVerdict v = judge_gang(
      {exited(0, "n0", 0, std::nullopt, kNow - 5), exited(1, "n1", 0, std::nullopt, kNow - 9)},
      kNow, kTimeout);
  ASSERT_EQ(v.phase, RunPhase::exited);
  EXPECT_EQ(v.exit->exit_code, 0);
  EXPECT_EQ(v.failed_task, -1);
}

TEST(GangVerdict, TheFirstTaskToFailIsTheAttemptsExitWithItsNode) {
  GangVerdict v = judge_gang({exited(0, "n0", 1, std::nullopt, kNow - 100), running(1, "n1"),
                              exited(2, "n2", 3, std::nullopt, kNow - 200)},
                             kNow, kTimeout);
  ASSERT_EQ(v.phase, RunPhase::exited);
  EXPECT_EQ(v.failed_task, 2);
  EXPECT_EQ(v.exit->exit_code, 3);
  EXPECT_EQ(v.exit->failed_node, "n2");
  EXPECT_EQ(v.exit->failed_rank, 2) << "its lines are the excerpt's (lifecycle/error_excerpt.h)";
  EXPECT_FALSE(v.exit->node_lost);
  EXPECT_EQ(v.exit->detail, "task 2 on n2 failed first");
}

TEST(GangVerdict, AVanishedTaskWhileOthersRunIsItsNodeLostAndWinsOverItsPeersErrors) {
  // Rank 1's node died; rank 0 then failed on the broken collective, with a record.
  GangVerdict v =
      judge_gang({exited(0, "n0", 1, std::nullopt, kNow - 100), vanished(1, "n1", kNow - 4'000)},
                 kNow, kTimeout);
  ASSERT_EQ(v.phase, RunPhase::exited);
  EXPECT_EQ(v.failed_task, 1);
  EXPECT_TRUE(v.exit->node_lost);
  EXPECT_EQ(v.exit->cause, ExitCause::node_lost);
  EXPECT_EQ(v.exit->failed_node, "n1");
  EXPECT_EQ(v.exit->failed_rank, 1);
  EXPECT_THAT(v.exit->detail, HasSubstr("task 1 on n1: its agent vanished"));
}

TEST(GangVerdict, ALiveTaskSilentForTheTimeoutIsItsNodeLost) {
  GangVerdict v = judge_gang({running(0, "n0"), running(1, "n1", kNow - kTimeout - 1'000),
                              running(2, "n2", kNow - kTimeout + 1)},
                             kNow, kTimeout);
  ASSERT_EQ(v.phase, RunPhase::exited);
  EXPECT_EQ(v.failed_task, 1);
  EXPECT_EQ(v.exit->failed_node, "n1");
  EXPECT_EQ(v.exit->detail, "no heartbeat from task 1 on n1 for 31 s");
}

TEST(GangVerdict, TheLongestSilentOfSeveralLostTasksIsNamed) {
  GangVerdict v = judge_gang(
      {running(0, "n0", kNow - 40'000), running(1, "n1", kNow - 90'000), running(2, "n2")}, kNow,
      kTimeout);
  EXPECT_EQ(v.failed_task, 1);
}

TEST(GangVerdict, SilenceIsNotJudgedWithoutATimeout) {
  GangVerdict v = judge_gang({running(0, "n0", 0)}, kNow, 0);
  EXPECT_EQ(v.phase, RunPhase::running);
}

TEST(GangVerdict, EveryTaskVanishingTogetherIsNotANodeLoss) {
  GangVerdict v =
      judge_gang({vanished(0, "n0", kNow - 10), vanished(1, "n1", kNow - 10)}, kNow, kTimeout);
  ASSERT_EQ(v.phase, RunPhase::exited);
  EXPECT_FALSE(v.exit->node_lost);
  EXPECT_EQ(v.exit->signal, SIGKILL);
  EXPECT_EQ(v.exit->detail, "agent vanished without an exit record");
  EXPECT_EQ(v.failed_task, -1);
}

TEST(GangVerdict, OneTaskKilledBySignalReadsAsBefore) {
  GangVerdict v = judge_gang({exited(0, "n0", std::nullopt, SIGKILL, kNow)}, kNow, kTimeout);
  ASSERT_EQ(v.phase, RunPhase::exited);
  EXPECT_EQ(v.exit->signal, SIGKILL);
  EXPECT_FALSE(v.exit->exit_code.has_value());
  EXPECT_EQ(v.exit->detail, "killed by signal 9");
}

TEST(GangVerdict, ATaskThatNeverStartedIsNeitherVanishedNorFailed) {
  TaskView unstarted;
  unstarted.rank = 1;
  unstarted.started = false;
  GangVerdict v = judge_gang({running(0, "n0"), unstarted}, kNow, kTimeout);
  EXPECT_EQ(v.phase, RunPhase::running);
}

}  // namespace
}  // namespace orch
