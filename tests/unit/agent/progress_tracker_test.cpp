// The tracker's records over a scripted timeline: no processes, no sleeps.

#include "agents/progress_tracker.h"

#include <gmock/gmock.h>

#include <nlohmann/json.hpp>

namespace orch::agent {
namespace {

using nlohmann::json;

ProtocolLine progress(std::int64_t step) {
  return {ProtocolLine::Kind::progress, step, ""};
}

std::vector<json> parsed(const std::vector<EventRecord>& records) {
  std::vector<json> out;
  for (const EventRecord& r : records) out.push_back(json::parse(r.line));
  return out;
}

TrackerOptions options(std::int64_t heartbeat, std::int64_t hang, std::int64_t interval = 1000) {
  TrackerOptions o;
  o.heartbeat_ms = heartbeat;
  o.hang_after_ms = hang;
  o.progress_interval_ms = interval;
  return o;
}

TEST(ProgressTracker, HeartbeatsSayWhoseTheyAre) {
  TrackerOptions o = options(1'000, 0);
  o.node = "n2";
  o.task_rank = 5;
  ProgressTracker t(o, 0);
  auto hb = parsed(t.on_tick(1'000, 2'000));
  ASSERT_EQ(hb.size(), 1u);
  EXPECT_EQ(hb[0], json::parse(R"({"event":"heartbeat","at_ms":2000,"node":"n2","task_rank":5})"));
}

TEST(ProgressTracker, HeartbeatsCarryTheLastProgressTime) {
  ProgressTracker t(options(30'000, 0), 0);
  EXPECT_EQ(t.next_due_in(0), 30'000);
  EXPECT_TRUE(t.on_tick(29'999, 1'000).empty());
  auto hb = parsed(t.on_tick(30'000, 2'000));
  ASSERT_EQ(hb.size(), 1u);
  EXPECT_EQ(hb[0], json::parse(R"({"event":"heartbeat","at_ms":2000})"));
  EXPECT_EQ(t.next_due_in(30'000), 30'000);

  auto p = parsed(t.on_line(progress(5), 40'000, 5'000));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], json::parse(R"({"event":"progress","step":5,"at_ms":5000})"));
  hb = parsed(t.on_tick(60'000, 6'000));
  ASSERT_EQ(hb.size(), 1u);
  EXPECT_EQ(hb[0]["last_progress_ms"], 5'000);
  // A tick long overdue (a suspended VM) gives one heartbeat, not a burst.
  EXPECT_EQ(t.on_tick(200'000, 7'000).size(), 1u);
  EXPECT_EQ(t.next_due_in(200'000), 10'000);
}

TEST(ProgressTracker, CoalescesProgressToOnePerInterval) {
  ProgressTracker t(options(0, 0), 0);
  EXPECT_EQ(t.next_due_in(0), -1);
  EXPECT_EQ(t.on_line(progress(1), 100, 1'100).size(), 1u);  // the first is written at once
  EXPECT_TRUE(t.on_line(progress(2), 200, 1'200).empty());
  EXPECT_TRUE(t.on_line(progress(3), 300, 1'300).empty());
  EXPECT_EQ(t.next_due_in(300), 800);
  EXPECT_TRUE(t.on_tick(1'099, 2'099).empty());
  auto due = parsed(t.on_tick(1'100, 2'100));
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0]["step"], 3);       // the newest step wins
  EXPECT_EQ(due[0]["at_ms"], 1'300);  // stamped when it was seen
  EXPECT_EQ(t.next_due_in(1'100), -1);
  EXPECT_TRUE(t.on_line(progress(4), 1'500, 2'500).empty());
  auto flushed = parsed(t.flush());
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_EQ(flushed[0]["step"], 4);
  EXPECT_TRUE(t.flush().empty());
}

TEST(ProgressTracker, CheckpointFlushesHeldProgressFirstAndIsDurable) {
  ProgressTracker t(options(0, 0), 0);
  t.on_line(progress(9), 0, 1'000);
  t.on_line(progress(10), 10, 1'010);
  auto records = t.on_line({ProtocolLine::Kind::checkpoint, 10, "/ck/\"10\""}, 20, 1'020);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_FALSE(records[0].durable);
  EXPECT_TRUE(records[1].durable);
  auto j = parsed(records);
  EXPECT_EQ(j[0]["step"], 10);
  EXPECT_EQ(j[1],
            json::parse(R"({"event":"checkpoint","step":10,"path":"/ck/\"10\"","at_ms":1020})"));
}

TEST(ProgressTracker, ReportsAHangOncePerSilence) {
  ProgressTracker t(options(0, 600'000), 1'000);
  EXPECT_EQ(t.next_due_in(1'000), 600'000);
  EXPECT_TRUE(t.on_tick(600'999, 5).empty());
  auto hang = t.on_tick(601'000, 7);
  ASSERT_EQ(hang.size(), 1u);
  EXPECT_TRUE(hang[0].durable);
  EXPECT_EQ(hang[0].warning, "orchestrate-agent: no progress line for 600 s (hang_after)");
  EXPECT_EQ(json::parse(hang[0].line), json::parse(R"({"event":"hang","silent_s":600,"at_ms":7})"));
  EXPECT_TRUE(t.on_tick(900'000, 8).empty());  // once
  EXPECT_EQ(t.next_due_in(900'000), -1);
  // Progress re-arms it: a second silence is a second hang.
  t.on_line(progress(1), 1'000'000, 9);
  EXPECT_EQ(t.next_due_in(1'000'000), 600'000);
  EXPECT_EQ(t.on_tick(1'600'000, 10).size(), 1u);
}

TEST(ProgressTracker, ZeroDisablesHeartbeatAndHang) {
  ProgressTracker t(options(0, 0), 0);
  EXPECT_TRUE(t.on_tick(1'000'000'000, 1).empty());
  EXPECT_EQ(t.next_due_in(0), -1);
}

}  // namespace
}  // namespace orch::agent
