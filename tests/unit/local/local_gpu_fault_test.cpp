// Issue 43 at the local site: each task's agent runs with the cluster's live_watch flags, and a
// fatal Xid line in one virtual node's kernel log (a file per node, "{node}" in the path) ends
// the gang gpu_xid on that node, naming the GPU's PCI id, as the Slurm site does.
#include <gmock/gmock.h>

#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class LocalGpuFaultTest : public LocalSiteTest {
 protected:
  void SetUp() override {
    LocalSiteTest::SetUp();
    LocalSiteOptions o;
    o.name = "loc";
    o.root = root_;
    o.nodes = 3;
    o.gpus_per_node = 4;
    o.agent_path = kAgentPath;
    o.live_watch.watch_s = 0.1;
    o.live_watch.kernel_log = root_ + "/{node}.kmsg";
    o.live_watch.nvidia_smi = "none";
    site_ = std::make_unique<LocalSite>(o);
  }
};

TEST_F(LocalGpuFaultTest, AFatalXidInOneNodesKernelLogEndsTheGangOnThatNode) {
  LaunchRequest r = request("g-xid", "echo up; sleep 30");
  r.nodes = 3;
  r.heartbeat_s = 0.2;
  r.heartbeat_timeout_s = 5;
  launch_ok(r);
  local::RunPaths paths = local::run_paths(root_, "g-xid");
  for (int rank = 1; rank < 3; ++rank) {
    pgids_.push_back(std::atoi(slurp(local::task_paths(paths, rank).agent_pid).c_str()));
  }
  ASSERT_TRUE(wait_output("g-xid", "up"));
  std::ofstream(root_ + "/loc-n1.kmsg", std::ios::app)
      << "NVRM: Xid (PCI:0000:3b:00): 79, pid=77, name=python3, GPU has fallen off the bus.\n";
  const auto wrote = std::chrono::steady_clock::now();
  RunObservation last = wait_exited("g-xid");
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_LT(std::chrono::steady_clock::now() - wrote, std::chrono::seconds(10));
  ASSERT_TRUE(last.exit.has_value());
  EXPECT_EQ(last.exit->cause, ExitCause::gpu_xid);
  EXPECT_FALSE(last.exit->node_lost);
  EXPECT_EQ(last.exit->failed_node, "loc-n1");
  EXPECT_EQ(last.exit->failed_rank, 1);
  EXPECT_THAT(last.exit->detail, HasSubstr("loc-n1: Xid 79 on PCI 0000:3b:00"));
  // The verdict is kept, with its cause.
  auto again = site_->observe("g-xid", 0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->exit->cause, ExitCause::gpu_xid);
}

}  // namespace
}  // namespace orch::testing
