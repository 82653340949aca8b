// Issue 40, item 5: the job-shape filter. A Slurm cluster that pins or forbids an option the
// job's slurm: section sets is no candidate; nor is a cluster whose nodes, as its site reports
// them, cannot give each node's tasks cpus_per_task x tasks_per_node CPUs and the job's memory.
#include <gmock/gmock.h>

#include "scheduler/placement/job_shape_filter.h"
#include "scheduler/placement/pipeline.h"
#include "tests/harness/builders.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

PlacementRequest request(const JobSpec& job) {
  return PlacementRequest{&job};
}

ClusterView sized(const ClusterSpec& c, std::vector<ClusterView::NodeSize> sizes) {
  ClusterView v{&c};
  v.node_sizes = std::move(sizes);
  return v;
}

JobSpec shaped(int nodes, int tasks_per_node, int cpus_per_task, std::int64_t memory_mb) {
  JobSpec job = make_job().nodes(nodes).gpus(1);
  job.tasks_per_node = tasks_per_node;
  job.cpus_per_task = cpus_per_task;
  job.memory_mb = memory_mb;
  return job;
}

TEST(JobShapeFilter, NodesThatCannotGiveTheCpusOrMemoryRejectTheCluster) {
  ClusterSpec c = make_cluster("alpha").nodes(2).gpus_per_node(8);
  const auto view = sized(c, {{"alpha-n1", 16, 64000}, {"alpha-n2", 16, 64000}});
  JobShapeFilter f;
  EXPECT_EQ(f.reject(request(shaped(2, 2, 8, 60000)), view), std::nullopt);  // 16 CPUs, fits
  EXPECT_THAT(f.reject(request(shaped(2, 4, 8, 0)), view),
              Optional(std::string("job needs 32 CPUs per node (cpus_per_task x tasks_per_node, "
                                   "memory) on 2 node(s); 0 of 2 usable nodes have them (the "
                                   "largest: 16 CPUs and 64000M)")));
  EXPECT_THAT(f.reject(request(shaped(1, 1, 0, 128 * 1024)), view),
              Optional(HasSubstr("job needs 128G per node")));
}

TEST(JobShapeFilter, OneBigNodeIsNotEnoughForTwo) {
  ClusterSpec c = make_cluster("alpha").nodes(2).gpus_per_node(8);
  const auto view = sized(c, {{"alpha-n1", 64, 512000}, {"alpha-n2", 16, 64000}});
  JobShapeFilter f;
  EXPECT_EQ(f.reject(request(shaped(1, 1, 32, 0)), view), std::nullopt);
  EXPECT_THAT(f.reject(request(shaped(2, 1, 32, 0)), view),
              Optional(HasSubstr("1 of 2 usable nodes have them")));
}

TEST(JobShapeFilter, UnreportedSizesAndUnsaidShapesPass) {
  ClusterSpec c = make_cluster("alpha").nodes(2).gpus_per_node(8);
  JobShapeFilter f;
  // The site says nothing of its nodes (a local or Kubernetes site): the job may go there.
  EXPECT_EQ(f.reject(request(shaped(2, 1, 512, 1 << 30)), ClusterView{&c}), std::nullopt);
  // A node whose memory the site does not report is taken to have enough.
  const auto partial = sized(c, {{"alpha-n1", 16, 0}, {"alpha-n2", 16, 0}});
  EXPECT_EQ(f.reject(request(shaped(2, 1, 8, 1 << 20)), partial), std::nullopt);
  // A job that asks no CPUs or memory is never refused here.
  const auto tiny = sized(c, {{"alpha-n1", 1, 100}});
  EXPECT_EQ(f.reject(request(make_job()), tiny), std::nullopt);
}

TEST(JobShapeFilter, UnhealthyNodesDoNotCount) {
  ClusterSpec c = make_cluster("alpha").nodes(2).gpus_per_node(8);
  auto view = sized(c, {{"alpha-n1", 64, 0}, {"alpha-n2", 16, 0}});
  view.unhealthy_nodes = {"alpha-n1"};
  JobShapeFilter f;
  EXPECT_THAT(f.reject(request(shaped(1, 1, 32, 0)), view),
              Optional(HasSubstr("0 of 1 usable nodes have them (the largest: 16 CPUs)")));
}

TEST(JobShapeFilter, ASlurmClusterThatPinsOrForbidsAJobsOptionIsNoCandidate) {
  ClusterSpec slurm = make_cluster("alpha").provider("slurm");
  slurm.slurm.account = "proj-a";
  slurm.slurm.job_options = {{"account", SlurmOptionRule::pinned},
                             {"qos", SlurmOptionRule::forbidden}};
  ClusterSpec kube = make_cluster("beta").provider("kubernetes");
  kube.slurm.job_options = slurm.slurm.job_options;  // ignored: not a Slurm cluster
  JobSpec job = make_job();
  job.slurm.qos = "high";
  JobShapeFilter f;
  EXPECT_THAT(f.reject(request(job), ClusterView{&slurm}),
              Optional(std::string("slurm.qos is forbidden on this cluster (the job sets it to "
                                   "high)")));
  EXPECT_EQ(f.reject(request(job), ClusterView{&kube}), std::nullopt);
  job.slurm.qos.clear();
  job.slurm.account = "proj-a";
  EXPECT_EQ(f.reject(request(job), ClusterView{&slurm}), std::nullopt);
  job.slurm.account = "proj-b";
  EXPECT_THAT(f.reject(request(job), ClusterView{&slurm}),
              Optional(HasSubstr("slurm.account is pinned to proj-a")));
}

TEST(JobShapeFilter, IsPartOfTheStandardPipeline) {
  ClusterSpec c = make_cluster("alpha").nodes(1).gpus_per_node(8);
  const auto view = sized(c, {{"alpha-n1", 16, 64000}});
  const JobSpec job = shaped(1, 1, 32, 0);
  EXPECT_THAT(PlacementPipeline::standard().rejection(request(job), view),
              Optional(HasSubstr("job-shape: job needs 32 CPUs per node")));
}

}  // namespace
}  // namespace orch::testing
