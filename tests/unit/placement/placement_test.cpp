// Placement plugins, one at a time, then the pipeline that runs them.
#include <gmock/gmock.h>

#include "scheduler/placement/filters.h"
#include "scheduler/placement/move_worth_score.h"
#include "scheduler/placement/pipeline.h"
#include "scheduler/placement/scores.h"
#include "tests/harness/builders.h"

namespace orch::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

struct Sites {
  std::vector<ClusterSpec> specs;
  std::vector<ClusterView> views() const {
    std::vector<ClusterView> v;
    for (const auto& s : specs) v.push_back(ClusterView{&s, SiteHealth::healthy, 0});
    return v;
  }
};

PlacementRequest request(const JobSpec& job, std::optional<std::string> previous = std::nullopt) {
  return PlacementRequest{&job, std::move(previous)};
}

TEST(AllowedClustersFilter, EmptyListAllowsEverything) {
  ClusterSpec alpha = make_cluster("alpha");
  JobSpec any = make_job();
  JobSpec only_beta = make_job().on({"beta"});
  AllowedClustersFilter f;
  EXPECT_EQ(f.reject(request(any), {&alpha}), std::nullopt);
  EXPECT_THAT(f.reject(request(only_beta), {&alpha}),
              Optional(std::string("not in the job's allowed clusters")));
}

TEST(SiteHealthyFilter, OnlyHealthySitesPass) {
  ClusterSpec alpha = make_cluster("alpha");
  JobSpec job = make_job();
  SiteHealthyFilter f;
  EXPECT_EQ(f.reject(request(job), {&alpha, SiteHealth::healthy, 0}), std::nullopt);
  EXPECT_THAT(f.reject(request(job), {&alpha, SiteHealth::unreachable, 0}),
              Optional(std::string("site is unreachable")));
  EXPECT_THAT(f.reject(request(job), {&alpha, SiteHealth::down, 0}),
              Optional(std::string("site is down")));
}

TEST(CapacityFilter, UnhealthyNodesAndNodesTheLastAttemptFailedOnAreNotCapacity) {
  ClusterSpec c = make_cluster("alpha").nodes(3).gpus_per_node(4);
  CapacityFilter f;
  JobSpec two_nodes = make_job().nodes(2).gpus(4);
  ClusterView view{&c, SiteHealth::healthy, 0, {"alpha-n2"}};
  EXPECT_EQ(f.reject(request(two_nodes), view), std::nullopt);
  // Resuming on alpha after alpha-n0 failed under the job: n0 and n2 are both out.
  PlacementRequest resume = request(two_nodes, "alpha");
  resume.avoid_nodes = {"alpha-n0"};
  EXPECT_THAT(f.reject(resume, view),
              Optional(std::string(
                  "only 4 of 12 GPUs free, job needs 8 (unusable nodes: alpha-n0 alpha-n2)")));
  EXPECT_EQ(unusable_nodes(resume, view), (std::vector<std::string>{"alpha-n0", "alpha-n2"}));
  // Nodes to avoid belong to the previous cluster only.
  ClusterSpec beta = make_cluster("beta").nodes(2).gpus_per_node(4);
  EXPECT_EQ(f.reject(resume, {&beta}), std::nullopt);
  EXPECT_TRUE(unusable_nodes(resume, {&beta}).empty());
}

TEST(CapacityFilter, ChecksShapeThenFreeGpus) {
  ClusterSpec c = make_cluster("alpha").nodes(2).gpus_per_node(4);
  CapacityFilter f;
  JobSpec too_wide = make_job().gpus(8);
  JobSpec too_many_nodes = make_job().nodes(3).gpus(1);
  JobSpec fits = make_job().nodes(2).gpus(2);
  EXPECT_THAT(f.reject(request(too_wide), {&c}),
              Optional(std::string("job needs 8 GPUs per node, cluster nodes have 4")));
  EXPECT_THAT(f.reject(request(too_many_nodes), {&c}),
              Optional(std::string("job needs 3 nodes, cluster has 2")));
  EXPECT_EQ(f.reject(request(fits), {&c, SiteHealth::healthy, 4}), std::nullopt);
  EXPECT_THAT(f.reject(request(fits), {&c, SiteHealth::healthy, 5}),
              Optional(std::string("only 3 of 8 GPUs free, job needs 4")));
}

TEST(CapacityFilter, GpusOtherTenantsHoldAreTakenAndNamed) {
  ClusterSpec c = make_cluster("alpha").nodes(2).gpus_per_node(4);
  CapacityFilter f;
  JobSpec job = make_job().gpus(4);
  ClusterView view{&c, SiteHealth::healthy, 2};
  EXPECT_EQ(f.reject(request(job), view), std::nullopt);
  view.gpus_foreign = 3;  // the site reports 5 busy: 2 ours, 3 another tenant's
  EXPECT_THAT(f.reject(request(job), view),
              Optional(std::string(
                  "only 3 of 8 GPUs free, job needs 4 (3 GPU(s) held by other tenants' jobs)")));
  EXPECT_EQ(gpus_free(request(job), view), 3);
}

TEST(FreeCapacityScore, IsTheShareLeftFreeAfterPlacement) {
  ClusterSpec c = make_cluster("alpha").nodes(2).gpus_per_node(4);
  JobSpec job = make_job().gpus(2);
  FreeCapacityScore s;
  EXPECT_DOUBLE_EQ(s.score(request(job), {&c, SiteHealth::healthy, 0}), 6.0 / 8);
  EXPECT_DOUBLE_EQ(s.score(request(job), {&c, SiteHealth::healthy, 6}), 0.0);
}

TEST(PreferredClusterScore, FirstPreferenceScoresHighest) {
  ClusterSpec a = make_cluster("alpha"), b = make_cluster("beta"), g = make_cluster("gamma");
  JobSpec job = make_job().prefer({"beta", "alpha"});
  PreferredClusterScore s;
  EXPECT_DOUBLE_EQ(s.score(request(job), {&b}), 1.0);
  EXPECT_DOUBLE_EQ(s.score(request(job), {&a}), 0.5);
  EXPECT_DOUBLE_EQ(s.score(request(job), {&g}), 0.0);
}

TEST(MoveWorthScore, JudgedAloneFavoursWhereTheLastAttemptRan) {
  ClusterSpec a = make_cluster("alpha"), b = make_cluster("beta");
  JobSpec job = make_job();
  MoveWorthScore s;
  EXPECT_DOUBLE_EQ(s.score(request(job, "beta"), {&b}), 1.0);
  EXPECT_DOUBLE_EQ(s.score(request(job, "beta"), {&a}), 0.0);
  EXPECT_DOUBLE_EQ(s.score(request(job), {&a}), 0.0);
}

TEST(Pipeline, EveryClusterGetsAVerdictAndTheBestFeasibleWins) {
  Sites s{{make_cluster("alpha"), make_cluster("beta"), make_cluster("gamma")}};
  auto views = s.views();
  views[0].health = SiteHealth::down;
  views[1].gpus_used = 6;
  JobSpec job = make_job().gpus(2);
  PlacementDecision d = PlacementPipeline::standard().place(request(job), views);
  ASSERT_THAT(d.chosen, Optional(std::string("gamma")));
  ASSERT_EQ(d.verdicts.size(), 3u);
  EXPECT_FALSE(d.verdicts[0].feasible);
  EXPECT_EQ(d.verdicts[0].reason, "site-healthy: site is down");
  EXPECT_TRUE(d.verdicts[1].feasible);
  EXPECT_LT(d.verdicts[1].score, d.verdicts[2].score);
  EXPECT_EQ(d.summary(), "alpha: site-healthy: site is down");
}

TEST(Pipeline, ResumedJobReturnsToItsHealthySiteEvenWhenAnotherIsEmptier) {
  Sites s{{make_cluster("alpha"), make_cluster("beta")}};
  auto views = s.views();
  views[0].gpus_used = 4;
  JobSpec job = make_job();
  EXPECT_THAT(PlacementPipeline::standard().place(request(job, "alpha"), views).chosen,
              Optional(std::string("alpha")));
}

TEST(Pipeline, NothingFeasibleMeansNoChoiceAndAllReasons) {
  Sites s{{make_cluster("alpha"), make_cluster("beta")}};
  JobSpec job = make_job().gpus(16);
  PlacementDecision d = PlacementPipeline::standard().place(request(job), s.views());
  EXPECT_FALSE(d.chosen.has_value());
  EXPECT_EQ(d.summary(), "alpha, beta: capacity: job needs 16 GPUs per node, cluster nodes have 4");
}

TEST(Pipeline, TheSummaryNamesFiveClustersPerReasonAndCountsTheRest) {
  Sites s{{make_cluster("c1"), make_cluster("c2"), make_cluster("c3"), make_cluster("c4"),
           make_cluster("c5"), make_cluster("c6"), make_cluster("c7"), make_cluster("c8")}};
  auto views = s.views();
  views[7].health = SiteHealth::down;
  JobSpec job = make_job().gpus(16);
  PlacementDecision d = PlacementPipeline::standard().place(request(job), views);
  EXPECT_EQ(d.summary(),
            "c1, c2, c3, c4, c5 and 2 more: capacity: job needs 16 GPUs per node, cluster nodes "
            "have 4; c8: site-healthy: site is down");
}

TEST(Pipeline, AVerdictListsEveryFilterThatRefusedTheClusterNotOnlyTheFirst) {
  Sites s{{make_cluster("alpha"), make_cluster("beta")}};
  auto views = s.views();
  views[0].health = SiteHealth::down;
  views[0].gpus_used = 8;
  JobSpec job = make_job().gpus(4).on({"beta"});
  PlacementDecision d = PlacementPipeline::standard().place(request(job), views);
  ASSERT_EQ(d.verdicts.size(), 2u);
  EXPECT_EQ(d.verdicts[0].reason, "allowed-clusters: not in the job's allowed clusters");
  EXPECT_THAT(
      d.verdicts[0].refused_by,
      ElementsAre("allowed-clusters: not in the job's allowed clusters",
                  "site-healthy: site is down", "capacity: only 0 of 8 GPUs free, job needs 4"));
  EXPECT_TRUE(d.verdicts[1].feasible);
  EXPECT_THAT(d.verdicts[1].refused_by, IsEmpty());
}

TEST(Pipeline, TiesGoToTheFirstClusterInTheFile) {
  Sites s{{make_cluster("beta"), make_cluster("alpha")}};
  JobSpec job = make_job();
  EXPECT_THAT(PlacementPipeline::standard().place(request(job), s.views()).chosen,
              Optional(std::string("beta")));
}

}  // namespace
}  // namespace orch::testing
