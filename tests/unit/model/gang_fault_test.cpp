// judge_gang's rule 0 (issue 43): a task's GPU fault, as the agent's live watch records it, ends
// the gang with the fault's cause, node and detail, before the losses and failures it causes.
#include <gmock/gmock.h>

#include "scheduler/model/gang_verdict.h"
#include "scheduler/model/task_fault.h"

namespace orch {
namespace {

constexpr std::int64_t kNow = 1'000'000;

TaskView task(int rank, const std::string& node) {
  TaskView t;
  t.rank = rank;
  t.node = node;
  t.alive = true;
  t.last_record_ms = kNow - 1'000;
  return t;
}

TaskFault fault(ExitCause cause, std::int64_t at_ms, const std::string& detail) {
  TaskFault f;
  f.cause = cause;
  f.at_ms = at_ms;
  f.detail = detail;
  return f;
}

TEST(GangFault, TheEarliestFaultEndsTheGangBeforeTheLossItCauses) {
  TaskView a = task(0, "n0"), b = task(1, "n1"), c = task(2, "n2");
  b.fault = fault(ExitCause::gpu_xid, kNow - 5'000, "Xid 79 on GPU 3: GPU has fallen off the bus");
  c.fault = fault(ExitCause::gpu_ecc, kNow - 2'000, "uncorrectable ECC errors on GPU 0 rose");
  a.last_record_ms = kNow - 60'000;  // silent past the timeout: would be node_lost
  GangVerdict v = judge_gang({a, b, c}, kNow, 30'000);
  EXPECT_EQ(v.phase, RunPhase::exited);
  ASSERT_TRUE(v.exit.has_value());
  EXPECT_EQ(v.exit->cause, ExitCause::gpu_xid);
  EXPECT_FALSE(v.exit->node_lost);
  EXPECT_EQ(v.exit->failed_node, "n1");
  EXPECT_EQ(v.exit->failed_rank, 1);
  EXPECT_EQ(v.exit->detail, "n1: Xid 79 on GPU 3: GPU has fallen off the bus");
  EXPECT_EQ(v.failed_task, 1);
}

TEST(GangFault, AGangThatFinishedCleanlyStaysFinished) {
  TaskView a = task(0, "n0");
  a.alive = false;
  a.exited = true;
  a.exit_code = 0;
  a.fault = fault(ExitCause::gpu_ecc, kNow - 5'000, "ECC");
  GangVerdict v = judge_gang({a}, kNow, 30'000);
  ASSERT_TRUE(v.exit.has_value());
  EXPECT_EQ(v.exit->exit_code, 0);
  EXPECT_FALSE(v.exit->cause.has_value());
}

TEST(GangFault, ARecordStatesItsFaultItselfOrInItsFaultMember) {
  auto rec = task_fault_of_line(
      R"({"event":"fault","cause":"gpu_xid","gpu":3,"xid":79,"detail":"Xid 79","node":"n1",)"
      R"("task_rank":4,"at_ms":17})");
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->task_rank, 4);
  auto member = task_fault_of_line(R"({"event":"exit","signal":15,"at_ms":20,)"
                                   R"("fault":{"cause":"gpu_ecc","detail":"ECC","at_ms":18}})");
  ASSERT_TRUE(member.has_value());
  EXPECT_EQ(member->cause, ExitCause::gpu_ecc);
  EXPECT_FALSE(task_fault_of_line(R"({"event":"heartbeat","at_ms":20})").has_value());
  EXPECT_FALSE(task_fault_of_line("{torn").has_value());
  // What a marker keeps reads back the same.
  auto again = task_fault_of_line(task_fault_json(*rec));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->xid, 79);
  EXPECT_EQ(again->node, "n1");
}

TEST(GangFault, TheNewCausesAreInfraAndRoundTripByName) {
  for (ExitCause c : {ExitCause::gpu_xid, ExitCause::gpu_ecc}) {
    EXPECT_TRUE(is_infra_cause(c));
    EXPECT_EQ(parse_exit_cause(to_string(c)), c);
  }
  EXPECT_EQ(parse_exit_cause("cancelled"), ExitCause::cancelled);
}

}  // namespace
}  // namespace orch
