// Issue 43, I/O stalls at a Slurm site: a task's io_stall, as the agent records it (the record,
// or the "stall" member its heartbeats repeat while the save lasts), read from the task's newest
// record into the observation's alerts, and the bound the batch script gives every task. Pure.
#include <gmock/gmock.h>

#include "adapters/slurm/task_events.h"
#include "tests/unit/slurm/batch_fixture.h"

namespace orch::slurm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kStallRecord =
    R"({"event":"io_stall","step":40,"path":"/ckpt/job-7/step-40.pt","mount":"/ckpt",)"
    R"("fs":"nfs4","running_s":130.2,"after_s":100,"node":"alpha-n2","task_rank":1,)"
    R"("at_ms":1700000000500})";

constexpr const char* kHeartbeatWithStall =
    R"({"event":"heartbeat","at_ms":1700000030000,"node":"alpha-n2","task_rank":1,)"
    R"("stall":{"step":40,"path":"/ckpt/job-7/step-40.pt","mount":"/ckpt","fs":"nfs4",)"
    R"("running_s":160,"after_s":100,"node":"alpha-n2","task_rank":1}})";

const std::vector<std::string> kNodes = {"alpha-n1", "alpha-n2", "alpha-n3"};

TEST(slurm_task_stall, AnIoStallRecordIsReadWithPathMountAndFilesystem) {
  TaskRecord t = parse_task_record(1, kStallRecord);
  ASSERT_TRUE(t.readable);
  ASSERT_TRUE(t.stall.has_value());
  EXPECT_EQ(t.stall->kind, "io_stall");
  EXPECT_EQ(t.stall->step, 40);
  EXPECT_EQ(t.stall->path, "/ckpt/job-7/step-40.pt");
  EXPECT_EQ(t.stall->mount, "/ckpt");
  EXPECT_EQ(t.stall->fs, "nfs4");
  EXPECT_DOUBLE_EQ(t.stall->running_s, 130.2);
  EXPECT_EQ(t.stall->node, "alpha-n2");
  EXPECT_EQ(t.stall->rank, 1);
  EXPECT_EQ(t.stall->at_ms, 1700000000500);
  EXPECT_EQ(t.stall->detail,
            "the save of step 40 to /ckpt/job-7/step-40.pt has run 130 s (bound 100 s) on nfs4 "
            "/ckpt");
}

TEST(slurm_task_stall, AHeartbeatRepeatsItAndARecordWithoutOneHasNone) {
  EXPECT_DOUBLE_EQ(parse_task_record(1, kHeartbeatWithStall).stall->running_s, 160);
  EXPECT_FALSE(parse_task_record(1, R"({"event":"heartbeat","at_ms":5,"node":"a"})").stall);
  // A stall without a path names nothing to look at.
  EXPECT_FALSE(parse_task_record(1, R"({"event":"io_stall","step":4,"at_ms":5})").stall);
}

TEST(slurm_task_stall, EveryTaskWhoseNewestRecordStatesAStallIsAnAlertWithItsNode) {
  TaskSnapshot s;
  s.gang = GangFile{3, 1, 5, 30};
  TaskRecord quiet = parse_task_record(0, R"({"event":"heartbeat","at_ms":5})");
  TaskRecord stalled = parse_task_record(2, R"({"event":"io_stall","step":9,"path":"/c/9",)"
                                            R"("running_s":70,"after_s":60,"at_ms":7})");
  s.tasks = {quiet, stalled};
  auto alerts = task_alerts(s, kNodes);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].node, "alpha-n3");  // placed by its rank: the record named no node
  EXPECT_EQ(alerts[0].rank, 2);
  EXPECT_EQ(alerts[0].path, "/c/9");
}

TEST(slurm_task_stall, TheBatchScriptGivesEveryTaskTheLaunchsBound) {
  LaunchRequest r = batch_fixture::basic_request();
  auto none = batch_fixture::plan_of(r, batch_fixture::basic_cluster());
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_THAT(none->script, Not(HasSubstr("--io-stall-after-s")));
  r.io_stall_after_s = 150;
  auto plan = batch_fixture::plan_of(r, batch_fixture::basic_cluster());
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_THAT(plan->script, HasSubstr(" --io-stall-after-s '150'"));
  r.io_stall_after_s = -1;
  EXPECT_FALSE(batch_fixture::plan_of(r, batch_fixture::basic_cluster()).ok());
}

}  // namespace
}  // namespace orch::slurm
