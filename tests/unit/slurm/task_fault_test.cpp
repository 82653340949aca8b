// Issue 43 at a Slurm site: a task's GPU fault, as the agent's live watch records it, read from
// the task's newest record (a fault record, or the "fault" member of any later one), the rule
// that picks the attempt's fault, the marker that keeps it, and the watch flags the batch script
// gives every task. Pure: records are built here, no files.
#include <gmock/gmock.h>

#include "adapters/slurm/task_events.h"
#include "tests/unit/slurm/batch_fixture.h"

namespace orch::slurm {
namespace {

using ::testing::HasSubstr;

constexpr const char* kFaultRecord =
    R"({"event":"fault","cause":"gpu_xid","gpu":3,"pci":"0000:3b:00","xid":79,)"
    R"("detail":"Xid 79 on GPU 3 (PCI 0000:3b:00): GPU has fallen off the bus",)"
    R"("node":"alpha-n2","task_rank":1,"at_ms":1700000000500})";

const std::vector<std::string> kNodes = {"alpha-n1", "alpha-n2", "alpha-n3"};

TaskSnapshot gang_of(std::vector<TaskRecord> tasks) {
  TaskSnapshot s;
  s.gang = GangFile{3, 1, 5, 30};
  s.tasks = std::move(tasks);
  return s;
}

TEST(slurm_task_fault, AFaultRecordIsReadWithEveryKey) {
  TaskRecord t = parse_task_record(1, kFaultRecord);
  ASSERT_TRUE(t.readable);
  EXPECT_EQ(t.event, "fault");
  ASSERT_TRUE(t.fault.has_value());
  EXPECT_EQ(t.fault->cause, ExitCause::gpu_xid);
  EXPECT_EQ(t.fault->gpu, 3);
  EXPECT_EQ(t.fault->xid, 79);
  EXPECT_EQ(t.fault->pci, "0000:3b:00");
  EXPECT_EQ(t.fault->node, "alpha-n2");
  EXPECT_EQ(t.fault->at_ms, 1700000000500);
}

TEST(slurm_task_fault, AHeartbeatOrExitThatRepeatsTheFaultCarriesIt) {
  TaskRecord hb = parse_task_record(
      1, R"({"event":"heartbeat","at_ms":1700000003000,"node":"alpha-n2","watch":{"temp_max_c":70},)"
         R"("fault":{"cause":"gpu_ecc","gpu":0,"ecc_uncorrected":2,"detail":"uncorrectable ECC)"
         R"( errors on GPU 0 rose from 0 to 2","node":"alpha-n2","at_ms":1700000002000}})");
  ASSERT_TRUE(hb.fault.has_value());
  EXPECT_EQ(hb.fault->cause, ExitCause::gpu_ecc);
  EXPECT_EQ(hb.fault->ecc_uncorrected, 2);
  TaskRecord plain = parse_task_record(0, R"({"event":"heartbeat","at_ms":1700000003000})");
  EXPECT_FALSE(plain.fault.has_value());
  // A cause the site does not know is no fault.
  TaskRecord odd = parse_task_record(
      0, R"({"event":"heartbeat","at_ms":1,"fault":{"cause":"gpu_bored","detail":"x"}})");
  EXPECT_FALSE(odd.fault.has_value());
}

TEST(slurm_task_fault, TheEarliestFaultOfTheGangEndsTheAttemptNamingNodeRankAndGpu) {
  TaskRecord later = parse_task_record(2, R"({"event":"heartbeat","at_ms":1700000009000,)"
                                          R"("fault":{"cause":"gpu_xid","xid":48,"detail":"Xid 48",)"
                                          R"("at_ms":1700000008000}})");
  TaskRecord first = parse_task_record(1, kFaultRecord);
  TaskRecord fine = parse_task_record(0, R"({"event":"heartbeat","at_ms":1700000009000})");
  auto m = faulted_task(gang_of({fine, later, first}), kNodes);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->node, "alpha-n2");
  EXPECT_EQ(m->task, 1);
  ExitStatus s = marker_status(*m);
  EXPECT_EQ(s.cause, ExitCause::gpu_xid);
  EXPECT_FALSE(s.node_lost);
  EXPECT_EQ(s.failed_node, "alpha-n2");
  EXPECT_EQ(s.failed_rank, 1);
  EXPECT_EQ(s.detail, "alpha-n2: Xid 79 on GPU 3 (PCI 0000:3b:00): GPU has fallen off the bus");
  // A fault record without its node is placed by rank, as any record.
  auto placed = faulted_task(gang_of({later}), kNodes);
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(placed->node, "alpha-n3");
  EXPECT_FALSE(faulted_task(gang_of({fine}), kNodes).has_value());
}

TEST(slurm_task_fault, TheMarkerKeepsTheFaultAcrossPolls) {
  auto m = faulted_task(gang_of({parse_task_record(1, kFaultRecord)}), kNodes);
  ASSERT_TRUE(m.has_value());
  auto back = parse_marker(marker_line(*m));
  ASSERT_TRUE(back.has_value());
  ASSERT_TRUE(back->fault.has_value());
  EXPECT_EQ(marker_status(*back).cause, ExitCause::gpu_xid);
  EXPECT_EQ(marker_status(*back).detail, marker_status(*m).detail);
  // A node_lost marker stays one.
  NodeLostMarker lost{"alpha-n3", 2, "no heartbeat from task 2 on alpha-n3 for 31 s", {}};
  EXPECT_EQ(marker_status(*parse_marker(marker_line(lost))).cause, ExitCause::node_lost);
}

TEST(slurm_task_fault, EveryTaskOfTheBatchScriptRunsWithTheClustersWatchFlags) {
  ClusterSpec c = batch_fixture::basic_cluster();
  c.live_watch.kernel_log = "/shared/lab/{node}.kmsg";
  c.live_watch.stop_on_fault = true;
  auto plan = batch_fixture::plan_of(batch_fixture::basic_request(), c);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_THAT(plan->script, HasSubstr("'--watch-s' '2' '--gpu-sample-s' '30' '--fault-action' "
                                      "'stop' '--kernel-log' '/shared/lab/{node}.kmsg'"));
}

}  // namespace
}  // namespace orch::slurm
