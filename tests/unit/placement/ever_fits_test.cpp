// Issue 42: could any configured cluster ever hold a job? Judged on what each cluster is (its
// shape, its nodes' sizes as its site reported them, whether the job may go there), never on
// what is free now; a node size not reported yet never refuses a job.
#include <gmock/gmock.h>

#include "scheduler/placement/ever_fits.h"
#include "tests/harness/builders.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

std::vector<ClusterView> views_of(const std::vector<ClusterSpec>& clusters) {
  std::vector<ClusterView> out;
  for (const auto& c : clusters) out.push_back(ClusterView{&c});
  return out;
}

TEST(EverFits, AJobNoClusterCanHoldNamesTheLargestShapeEachOffers) {
  const std::vector<ClusterSpec> clusters = {
      make_cluster("east").nodes(8).gpus_per_node(8).accelerator("h100"),
      make_cluster("west").nodes(2).gpus_per_node(4).accelerator("a100")};
  const JobSpec job = make_job().nodes(4).gpus(64);
  EXPECT_THAT(fits_no_cluster(job, views_of(clusters)),
              Optional(std::string("no configured cluster can ever hold this job (4 nodes x 64 "
                                   "GPUs): east offers at most 8 nodes x 8 H100; west at most 2 "
                                   "nodes x 4 A100")));
}

TEST(EverFits, AJobThatFitsOneClusterFitsEvenWhenItIsBusyOrDown) {
  const std::vector<ClusterSpec> clusters = {make_cluster("east").nodes(2).gpus_per_node(8)};
  auto views = views_of(clusters);
  views[0].gpus_used = 16;
  views[0].health = SiteHealth::down;
  views[0].admission = Admission::draining;
  EXPECT_EQ(fits_no_cluster(make_job().nodes(2).gpus(8), views), std::nullopt);
  EXPECT_NE(fits_no_cluster(make_job().nodes(3).gpus(8), views), std::nullopt);
}

TEST(EverFits, TheClustersTheJobMayNotUseAndRetiredOnesDoNotCount) {
  const std::vector<ClusterSpec> clusters = {make_cluster("east").nodes(2).gpus_per_node(8),
                                             make_cluster("west").nodes(4).gpus_per_node(8)};
  auto views = views_of(clusters);
  const JobSpec job = make_job().nodes(4).gpus(8).on({"east"});
  EXPECT_THAT(fits_no_cluster(job, views),
              Optional(HasSubstr("west at most 4 nodes x 8 H100 (not in placement.allowed)")));
  views[1].admission = Admission::retired;
  EXPECT_THAT(fits_no_cluster(make_job().nodes(4).gpus(8), views),
              Optional(HasSubstr("west at most 4 nodes x 8 H100 (retired)")));
}

TEST(EverFits, MemoryIsJudgedOnlyOnTheNodeSizesASiteReported) {
  const std::vector<ClusterSpec> clusters = {make_cluster("east").nodes(2).gpus_per_node(8)};
  auto views = views_of(clusters);
  JobSpec job = make_job().nodes(1).gpus(8);
  job.memory_mb = 1024 * 1024;
  // Nothing reported yet: the job may fit, so it is not refused.
  EXPECT_EQ(fits_no_cluster(job, views), std::nullopt);
  // One node reported too small, the other not yet: still not refused.
  views[0].node_sizes = {{"east-n0", 64, 512 * 1024}};
  EXPECT_EQ(fits_no_cluster(job, views), std::nullopt);
  views[0].node_sizes.push_back({"east-n1", 64, 512 * 1024});
  EXPECT_THAT(fits_no_cluster(job, views),
              Optional(std::string("no configured cluster can ever hold this job (1 node x 8 "
                                   "GPUs, 1T per node): east offers at most 2 nodes x 8 H100, "
                                   "512G and 64 CPUs per node (fewer than 1 node(s) with the "
                                   "job's CPUs and memory)")));
}

TEST(EverFits, TheLargestShapeSaysWhenTheNodeSizesAreNotReportedYet) {
  const ClusterSpec c = make_cluster("east").nodes(1).gpus_per_node(4).accelerator("h100");
  JobSpec job = make_job();
  EXPECT_EQ(largest_shape(ClusterView{&c}, job), "1 node x 4 H100");
  job.memory_mb = 1024;
  EXPECT_EQ(largest_shape(ClusterView{&c}, job), "1 node x 4 H100 (node sizes not reported yet)");
}

}  // namespace
}  // namespace orch::testing
