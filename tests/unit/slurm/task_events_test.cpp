// The rules that turn a Slurm attempt's task records into its observation (task_events.h):
// the gang file, one record per task, the node_lost marker, the heartbeat rule and the node to
// blame after the job ended. Pure: records are built here, no files.
#include "adapters/slurm/task_events.h"

#include <gmock/gmock.h>

#include <string>
#include <vector>

namespace orch::slurm {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kNow = 1'700'000'100'000;

GangFile gang(int tasks, int per_node = 1, double heartbeat_s = 5, double timeout_s = 30) {
  return GangFile{tasks, per_node, heartbeat_s, timeout_s};
}

// A task whose newest record is `event`, written `age_s` before kNow.
TaskRecord task(int rank, const std::string& event, double age_s, const std::string& node = "") {
  TaskRecord t;
  t.rank = rank;
  t.readable = true;
  t.event = event;
  t.node = node;
  t.at_ms = kNow - static_cast<std::int64_t>(age_s * 1000);
  return t;
}

TaskRecord exited(int rank, double age_s, int code, const std::string& node = "") {
  TaskRecord t = task(rank, "exit", age_s, node);
  t.exit_code = code;
  return t;
}

TaskSnapshot snapshot(GangFile g, std::vector<TaskRecord> tasks) {
  TaskSnapshot s;
  s.gang = g;
  s.tasks = std::move(tasks);
  return s;
}

const std::vector<std::string> kNodes = {"alpha-n1", "alpha-n2", "alpha-n3"};

TEST(slurm_task_events_gang_file, ReadsBackWhatLaunchWrites) {
  LaunchRequest r;
  r.nodes = 3;
  r.tasks_per_node = 2;
  r.heartbeat_s = 2.5;
  r.heartbeat_timeout_s = 15;
  EXPECT_EQ(gang_file_line(r), "tasks=6 tasks_per_node=2 heartbeat_s=2.5 heartbeat_timeout_s=15");
  auto g = parse_gang_file(gang_file_line(r) + "\n");
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->tasks, 6);
  EXPECT_EQ(g->tasks_per_node, 2);
  EXPECT_DOUBLE_EQ(g->heartbeat_s, 2.5);
  EXPECT_DOUBLE_EQ(g->heartbeat_timeout_s, 15);
  // Unknown keys are skipped, so a later server may add some.
  EXPECT_TRUE(parse_gang_file(gang_file_line(r) + " future=1").has_value());
}

TEST(slurm_task_events_gang_file, RefusesAMissingOrBadValue) {
  for (const char* line : {"", "tasks=2 tasks_per_node=1 heartbeat_s=5",
                           "tasks=0 tasks_per_node=1 heartbeat_s=5 heartbeat_timeout_s=30",
                           "tasks=2 tasks_per_node=x heartbeat_s=5 heartbeat_timeout_s=30",
                           "tasks=2 tasks_per_node=1 heartbeat_s=-1 heartbeat_timeout_s=30",
                           "tasks=2 tasks_per_node=1 heartbeat_s=5 heartbeat_timeout_s=nan",
                           "tasks=2 tasks_per_node=1 heartbeat_s=5 heartbeat_timeout_s=30s"}) {
    EXPECT_FALSE(parse_gang_file(line).has_value()) << line;
  }
}

TEST(slurm_task_events_record, ReadsTheAgentsRecords) {
  TaskRecord hb = parse_task_record(
      2, R"({"event":"heartbeat","at_ms":1700000000000,"node":"alpha-n3","task_rank":2})");
  EXPECT_TRUE(hb.readable);
  EXPECT_EQ(hb.rank, 2);
  EXPECT_EQ(hb.event, "heartbeat");
  EXPECT_EQ(hb.at_ms, 1'700'000'000'000);
  EXPECT_EQ(hb.node, "alpha-n3");
  TaskRecord ex = parse_task_record(0, R"({"event":"exit","signal":9,"at_ms":5})");
  EXPECT_TRUE(ex.readable);
  EXPECT_EQ(ex.signal, 9);
  EXPECT_FALSE(ex.exit_code.has_value());
}

TEST(slurm_task_events_record, ATornOrForeignLineIsNotReadable) {
  for (const char* line :
       {R"({"event":"heartbeat","at_)", "not json", "[1,2]", R"({"event":"heartbeat"})",
        R"({"event":7,"at_ms":1})", R"({"event":"heartbeat","at_ms":"soon"})"}) {
    TaskRecord t = parse_task_record(1, line);
    EXPECT_FALSE(t.readable) << line;
    EXPECT_EQ(t.rank, 1);
  }
}

TEST(slurm_task_events_marker, RoundTripsAnyDetail) {
  NodeLostMarker m{"alpha-n3", 2, "no heartbeat \"quoted\"\nsecond line \xff"};
  std::string line = marker_line(m);
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one line";
  auto back = parse_marker(line);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->node, "alpha-n3");
  EXPECT_EQ(back->task, 2);
  EXPECT_THAT(back->detail, HasSubstr("second line"));
  EXPECT_FALSE(parse_marker("{\"task\":1}").has_value());
  EXPECT_FALSE(parse_marker("half {\"node\":").has_value());
  ExitStatus s = node_lost_status(*back);
  EXPECT_TRUE(s.node_lost);
  EXPECT_EQ(s.cause, ExitCause::node_lost);
  EXPECT_EQ(s.failed_node, "alpha-n3");
}

TEST(slurm_task_events_heartbeat, TheSilentTaskLosesItsNode) {
  auto s =
      snapshot(gang(3), {task(0, "heartbeat", 2, "alpha-n1"), task(1, "progress", 4, "alpha-n2"),
                         task(2, "heartbeat", 31, "alpha-n3")});
  auto lost = silent_task(s, kNow, kNodes);
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->node, "alpha-n3");
  EXPECT_EQ(lost->task, 2);
  EXPECT_EQ(lost->detail, "no heartbeat from task 2 on alpha-n3 for 31 s");
}

TEST(slurm_task_events_heartbeat, NotBeforeTheTimeout) {
  auto s = snapshot(gang(3),
                    {task(0, "heartbeat", 2), task(1, "heartbeat", 2), task(2, "heartbeat", 29.9)});
  EXPECT_FALSE(silent_task(s, kNow, kNodes).has_value());
}

TEST(slurm_task_events_heartbeat, ARecordWithoutANodeIsPlacedByRank) {
  // 3 nodes x 2 tasks: rank 3 is node rank 1, the job's second node.
  std::vector<TaskRecord> tasks;
  for (int r = 0; r < 6; ++r) tasks.push_back(task(r, "heartbeat", r == 3 ? 40 : 1));
  auto lost = silent_task(snapshot(gang(6, 2), tasks), kNow, kNodes);
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->node, "alpha-n2");
  EXPECT_EQ(lost->task, 3);
}

TEST(slurm_task_events_heartbeat, TheLongestSilentTaskIsNamed) {
  auto s = snapshot(gang(3),
                    {task(0, "heartbeat", 1), task(1, "heartbeat", 35), task(2, "heartbeat", 50)});
  auto lost = silent_task(s, kNow, kNodes);
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->task, 2);
}

TEST(slurm_task_events_heartbeat, EveryNodeSilentAtOnceIsTheLoginNodesView) {
  auto s = snapshot(gang(3),
                    {task(0, "heartbeat", 40), task(1, "heartbeat", 41), task(2, "heartbeat", 42)});
  EXPECT_FALSE(silent_task(s, kNow, kNodes).has_value());
  // One node's tasks: nothing to compare with, so the silence is that node's.
  auto one = snapshot(gang(2, 2), {task(0, "heartbeat", 40), task(1, "heartbeat", 41)});
  auto lost = silent_task(one, kNow, kNodes);
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->node, "alpha-n1");
}

TEST(slurm_task_events_heartbeat, WhatIsNotJudged) {
  // A task that exited, one with no record yet and one whose line is torn: not silent.
  TaskRecord empty;
  empty.rank = 1;
  empty.empty = true;
  TaskRecord torn = parse_task_record(2, "{\"event\":\"heart");
  auto s = snapshot(gang(4), {task(0, "heartbeat", 1), empty, torn, exited(3, 100, 0)});
  EXPECT_FALSE(silent_task(s, kNow, kNodes).has_value());
  // Heartbeats off, or no gang file (a run from before heartbeats).
  auto off = snapshot(gang(2, 1, 0, 30), {task(0, "heartbeat", 1), task(1, "heartbeat", 100)});
  EXPECT_FALSE(silent_task(off, kNow, kNodes).has_value());
  auto no_timeout = snapshot(gang(2, 1, 5, 0), {task(0, "heartbeat", 1), task(1, "start", 100)});
  EXPECT_FALSE(silent_task(no_timeout, kNow, kNodes).has_value());
  TaskSnapshot old;
  old.tasks = {task(0, "heartbeat", 1), task(1, "heartbeat", 100)};
  EXPECT_FALSE(silent_task(old, kNow, kNodes).has_value());
}

TEST(slurm_task_events_after_end, AFailedJobNamesTheNodeThatFailedFirst) {
  // Rank 1 exited 3 first; srun then stopped rank 0 (signal) and rank 2 (exit 1) after it.
  TaskRecord stopped = task(0, "exit", 1);
  stopped.signal = 15;
  auto s = snapshot(gang(3), {stopped, exited(1, 2, 3), exited(2, 1, 1)});
  EXPECT_EQ(failed_node_after_end(s, "FAILED", kNodes), "alpha-n2");
  EXPECT_EQ(failed_node_after_end(s, "OUT_OF_MEMORY", kNodes), "alpha-n2");
  EXPECT_EQ(failed_node_after_end(s, "CANCELLED", kNodes), "");
  EXPECT_EQ(failed_node_after_end(s, "COMPLETED", kNodes), "");
}

TEST(slurm_task_events_after_end, ANodeFailNamesTheNodeSilentLongest) {
  auto s = snapshot(gang(3), {exited(0, 1, 0), task(1, "heartbeat", 20), task(2, "heartbeat", 8)});
  EXPECT_EQ(failed_node_after_end(s, "NODE_FAIL", kNodes), "alpha-n2");
  EXPECT_EQ(failed_node_after_end(snapshot(gang(1), {}), "NODE_FAIL", kNodes), "");
}

}  // namespace
}  // namespace orch::slurm
