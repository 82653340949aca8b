// A job's Slurm shape in the brain (issue 40, item 5): the nodes' CPUs and memory a site reports
// are kept with its nodes, and a job whose cpus_per_task x tasks_per_node or memory no node of a
// cluster can give goes to one that can, or waits with the job-shape filter's reason until the
// site reports a node that can. A job whose slurm: options no allowed cluster takes is refused at
// submit. The sites' part is played with events.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainJobShape : public BrainFixture {
 protected:
  void SetUp() override {
    ClusterSpec alpha = make_cluster("alpha").provider("slurm");
    alpha.slurm.job_options = {{"qos", SlurmOptionRule::forbidden}};
    start({alpha, make_cluster("beta")});
  }
  // A site lists its two nodes (4 GPUs each) with these CPUs and memory (MiB).
  void reports(const std::string& cluster, int cpus, std::int64_t memory_mb) {
    NodeInfo n0{cluster + "-n0", 4, true, "", 0, cpus, memory_mb};
    NodeInfo n1{cluster + "-n1", 4, true, "", 0, cpus, memory_mb};
    handle(InventoryObserved{cluster, {{n0, n1}}});
  }
  static JobSpec shaped(int cpus_per_task, std::int64_t memory_mb) {
    JobSpec job = make_job().gpus(4);
    job.cpus_per_task = cpus_per_task;
    job.memory_mb = memory_mb;
    return job;
  }
};

TEST_F(BrainJobShape, TheSitesNodeSizesAreKeptWithItsNodes) {
  reports("alpha", 64, 512000);
  const auto nodes = store->nodes("alpha").value();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].cpus, 64);
  EXPECT_EQ(nodes[0].memory_mb, 512000);
}

TEST_F(BrainJobShape, AJobGoesWhereTheNodesCanGiveItsCpusAndMemory) {
  reports("alpha", 16, 64000);
  reports("beta", 64, 512000);
  JobId id = submit(shaped(32, 128 * 1024));
  EXPECT_EQ(last_attempt(id).cluster, "beta");
}

TEST_F(BrainJobShape, AJobNoNodeCanHoldWaitsWithTheReasonUntilOneIsReported) {
  reports("alpha", 16, 64000);
  reports("beta", 16, 64000);
  JobId id = submit_anyway(shaped(32, 0));  // refused at submit without (issue 42)
  ASSERT_EQ(job(id).state, JobState::pending);
  EXPECT_THAT(job(id).reason, HasSubstr("job-shape: job needs 32 CPUs per node"));

  clock.advance_ms(1000);
  reports("beta", 64, 64000);
  handle(Tick{});
  EXPECT_EQ(job(id).state, JobState::placed) << job(id).reason;
  EXPECT_EQ(last_attempt(id).cluster, "beta");
}

TEST_F(BrainJobShape, ASlurmClusterThatForbidsAnOptionIsPassedOverOrTheJobRefused) {
  JobSpec job = make_job().gpus(4).prefer({"alpha"});
  job.slurm.qos = "high";
  JobId id = submit(job);
  EXPECT_EQ(last_attempt(id).cluster, "beta");  // beta is not Slurm: it ignores slurm:

  job.allowed_clusters = {"alpha"};
  job.preferred_clusters.clear();
  auto refused = brain->handle(SubmitJob{job});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().where, "slurm");
  EXPECT_THAT(refused.error().message, HasSubstr("alpha: slurm.qos is forbidden on this cluster"));
}

}  // namespace
}  // namespace orch::testing
