// Issue 42: a job no configured cluster could ever hold is refused at submit, naming the largest
// shape each cluster offers; queued anyway, it waits and its reason says it fits no configured
// cluster. Every point of a sweep is checked. A cluster whose nodes' sizes are not reported yet
// never refuses a job for its memory.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class BrainSubmitRefusal : public BrainFixture {
 protected:
  void SetUp() override {
    start({make_cluster("east").nodes(8).gpus_per_node(8).accelerator("h100"),
           make_cluster("west").nodes(2).gpus_per_node(4).accelerator("a100")});
  }
  static Submitter anyway() {
    Submitter who;
    who.queue_anyway = true;
    return who;
  }
};

TEST_F(BrainSubmitRefusal, AJobNoClusterCanHoldIsRefusedAtSubmitWithEachClustersLargestShape) {
  auto refused = brain->handle(SubmitJob{make_job().nodes(4).gpus(64)});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::invalid);
  EXPECT_EQ(refused.error().where, "resources");
  EXPECT_EQ(refused.error().message,
            "no configured cluster can ever hold this job (4 nodes x 64 GPUs): east offers at "
            "most 8 nodes x 8 H100; west at most 2 nodes x 4 A100; use --queue-anyway to keep "
            "it for a cluster still to come");
  EXPECT_TRUE(store->jobs(std::nullopt, 100).value().empty()) << "nothing is stored";
}

TEST_F(BrainSubmitRefusal, QueuedAnywayItWaitsSayingItFitsNoConfiguredCluster) {
  auto kept = brain->handle(SubmitJob{make_job().nodes(4).gpus(64), anyway()});
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  const JobRow job = store->job(kept->job_id).value().value();
  EXPECT_EQ(job.state, JobState::pending);
  EXPECT_EQ(job.reason,
            "fits no configured cluster, kept for a cluster still to come; waiting for capacity: "
            "east: capacity: job needs 64 GPUs per node, cluster nodes have 8; west: capacity: "
            "job needs 64 GPUs per node, cluster nodes have 4");
}

TEST_F(BrainSubmitRefusal, AJobThatFitsABusyClusterIsAcceptedAndWaitsForCapacity) {
  const JobId first = submit(make_job().nodes(8).gpus(8));
  ASSERT_EQ(store->job(first).value()->state, JobState::placed);
  const JobId second = submit(make_job().nodes(8).gpus(8));
  EXPECT_EQ(store->job(second).value()->state, JobState::pending);
  EXPECT_THAT(store->job(second).value()->reason, StartsWith("waiting for capacity"));
}

TEST_F(BrainSubmitRefusal, MemoryIsRefusedOnlyOnceTheSitesReportedTheirNodes) {
  JobSpec big = make_job().nodes(2).gpus(4);
  big.memory_mb = 1024 * 1024;
  const JobId unknown = submit(big);  // no node reported yet: it may fit
  EXPECT_NE(unknown, 0);
  for (const std::string c : {"east", "west"}) {
    std::vector<NodeInfo> nodes;
    for (int i = 0; i < (c == "east" ? 8 : 2); ++i) {
      nodes.push_back(
          {c + "-n" + std::to_string(i), c == "east" ? 8 : 4, true, "", 0, 64, 512 * 1024});
    }
    handle(InventoryObserved{c, {nodes}});
  }
  auto refused = brain->handle(SubmitJob{big});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message,
              HasSubstr("east offers at most 8 nodes x 8 H100, 512G and 64 CPUs per node "
                        "(fewer than 2 node(s) with the job's CPUs and memory)"));
}

TEST_F(BrainSubmitRefusal, EveryPointOfASweepIsCheckedAndNoneIsStoredWhenOneIsRefused) {
  JobSpec sweep = make_job().name("wide").nodes(4).gpus(64);
  sweep.sweep.env = {{"LR", {"1e-4", "3e-4"}}};
  auto refused = brain->handle(SubmitJob{sweep});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message,
              StartsWith("sweep point 1 (wide-1): no configured cluster can ever hold"));
  EXPECT_TRUE(store->jobs(std::nullopt, 100).value().empty());
  auto kept = brain->handle(SubmitJob{sweep, anyway()});
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->jobs.size(), 2u);
}

}  // namespace
}  // namespace orch::testing
