// Placement by expected goodput: a faster accelerator wins only when its history backs it. Also
// the admission filter and quarantined nodes as lost capacity.
#include <gmock/gmock.h>

#include "scheduler/placement/filters.h"
#include "scheduler/placement/goodput_score.h"
#include "scheduler/placement/pipeline.h"
#include "tests/harness/builders.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;
using ::testing::StartsWith;

PlacementRequest request(const JobSpec& job, std::optional<std::string> previous = std::nullopt) {
  return PlacementRequest{&job, std::move(previous)};
}

// alpha: H100 (989 TFLOP/s), no history. beta: MI300X (1307 TFLOP/s), 32% more on paper.
struct TwoVendors {
  ClusterSpec alpha = make_cluster("alpha").accelerator("h100");
  ClusterSpec beta = make_cluster("beta").accelerator("mi300x");
  std::vector<ClusterView> views() const {
    return {ClusterView{&alpha, SiteHealth::healthy, 0},
            ClusterView{&beta, SiteHealth::healthy, 0}};
  }
};

TEST(GoodputScore, PeakComesFromTheClusterOverrideElseTheTable) {
  auto peak = [](const ClusterSpec& c) { return c.peak_flops_per_gpu(); };
  EXPECT_THAT(peak(make_cluster("a").accelerator("a100")), Optional(312e12));
  EXPECT_THAT(peak(make_cluster("a").accelerator("a100").peak_tflops(400)), Optional(400e12));
  EXPECT_EQ(peak(make_cluster("a").accelerator("tpu-v9")), std::nullopt);
}

TEST(GoodputScore, RawScoreIsTheExpectedUsefulFlops) {
  TwoVendors s;
  JobSpec job = make_job().nodes(2).gpus(4);
  GoodputScore g;
  auto views = s.views();
  GoodputEstimate e = estimate_goodput(2, 8, 989e12, {});
  EXPECT_DOUBLE_EQ(g.score(request(job), views[0]), e.flops);
  EXPECT_TRUE(g.relative());
  EXPECT_EQ(g.explain(request(job), views[0]),
            "mfu 0.35, ettr 0.994, node mtbf 2000 h, 2.75 PFLOP/s");
  ClusterSpec odd = make_cluster("odd").accelerator("tpu-v9");
  EXPECT_EQ(g.score(request(job), {&odd}), 0);
  EXPECT_EQ(g.explain(request(job), {&odd}), "peak unknown for accelerator \"tpu-v9\"");
}

TEST(GoodputPlacement, HigherPeakWinsWhenItsHistoryIsAsGood) {
  TwoVendors s;
  JobSpec job = make_job().nodes(2).gpus(4);
  auto views = s.views();
  PlacementDecision d = PlacementPipeline::standard().place(request(job), views);
  EXPECT_THAT(d.chosen, Optional(std::string("beta")));
  // The best gets the full weight; the other its share of the best's FLOP/s.
  EXPECT_THAT(d.verdicts[1].text(), StartsWith("goodput=6.000 (mfu 0.35, ettr 0.994"));
  EXPECT_THAT(d.verdicts[0].text(), StartsWith("goodput=4.540 "));  // 6 x 989 / 1307
  // Equally good measured histories: still beta.
  for (auto& v : views) {
    v.history.mfu = 0.4;
    v.history.node_hours = 5000;
    v.history.node_failures = 2;
  }
  EXPECT_THAT(PlacementPipeline::standard().place(request(job), views).chosen,
              Optional(std::string("beta")));
}

TEST(GoodputPlacement, HigherPeakWithAMuchWorseMtbfLoses) {
  TwoVendors s;
  JobSpec job = make_job().nodes(2).gpus(4);
  auto views = s.views();
  // One failure per node-hour over 10,000 node-hours: a 2-node job expects a failure every half
  // hour (placement weighs the prior as two failures at 2000 h, 4000 node-hours, against it).
  views[1].history.node_hours = 10000;
  views[1].history.node_failures = 10000;
  PlacementDecision d = PlacementPipeline::standard().place(request(job), views);
  EXPECT_THAT(d.chosen, Optional(std::string("alpha")));
  EXPECT_THAT(d.verdicts[1].text(), HasSubstr("node mtbf 1 h"));
  // A mildly worse MTBF does not outweigh 32% more peak.
  views[1].history.node_failures = 5;
  EXPECT_THAT(PlacementPipeline::standard().place(request(job), views).chosen,
              Optional(std::string("beta")));
}

TEST(GoodputPlacement, HigherPeakWithAMuchWorseMfuLoses) {
  TwoVendors s;
  JobSpec job = make_job().nodes(2).gpus(4);
  auto views = s.views();
  views[0].history.mfu = 0.40;
  views[1].history.mfu = 0.20;  // 1307 x 0.2 < 989 x 0.4
  PlacementDecision d = PlacementPipeline::standard().place(request(job), views);
  EXPECT_THAT(d.chosen, Optional(std::string("alpha")));
  EXPECT_THAT(d.verdicts[0].text(), StartsWith("goodput=6.000 (mfu 0.40"));
}

TEST(GoodputPlacement, AResumedJobMovesWhenTheRestOfItsRunRepaysTheMove) {
  // Two equal H100 clusters, both measured; the job ran on alpha and has run for a day (so
  // about a day is left of it), with its checkpoint only there.
  ClusterSpec a = make_cluster("alpha").nodes(4).gpus_per_node(8);
  ClusterSpec b = make_cluster("beta").nodes(4).gpus_per_node(8);
  JobSpec job = make_job().nodes(2).gpus(4);
  std::vector<ClusterView> views = {ClusterView{&a, SiteHealth::healthy, 0},
                                    ClusterView{&b, SiteHealth::healthy, 0}};
  views[0].history.mfu = 0.30;
  views[1].history.mfu = 0.36;  // 1.2x: worth it when the copy is quick
  PlacementRequest req = request(job, "alpha");
  req.now_ms = 86'400'000;
  req.run_started_ms = 0;
  req.checkpoint_copy_s = {{"alpha", 0.0}, {"beta", 600.0}};
  EXPECT_THAT(PlacementPipeline::standard().place(req, views).chosen,
              Optional(std::string("beta")));
  // Five hours to copy there: 0.36 x 19 h < 0.30 x 24 h, it stays.
  req.checkpoint_copy_s["beta"] = 5 * 3600.0;
  EXPECT_THAT(PlacementPipeline::standard().place(req, views).chosen,
              Optional(std::string("alpha")));
  // ...unless the spec says a month is left: 0.36 x (30 d - 5 h) > 0.30 x 30 d.
  job.expected_run_s = 31 * 86400.0;
  EXPECT_THAT(PlacementPipeline::standard().place(req, views).chosen,
              Optional(std::string("beta")));
  // Equal ones: beta's free GPUs (24 of 32) do not move it, nor does a median MFU higher by less
  // than measurements of identical clusters differ by.
  job.expected_run_s.reset();
  views[1].history.mfu = 0.30;
  views[0].gpus_used = 24;
  req.checkpoint_copy_s["beta"] = 0;
  EXPECT_THAT(PlacementPipeline::standard().place(req, views).chosen,
              Optional(std::string("alpha")));
  views[1].history.mfu = 0.302;
  EXPECT_THAT(PlacementPipeline::standard().place(req, views).chosen,
              Optional(std::string("alpha")));
}

TEST(GoodputPlacement, AnUnmeasuredClusterIsTriedFromAPoorOneButNotFromTheBest) {
  // A 64-node job expects a failure (a chance to move again) every 31 h at the prior's MTBF.
  ClusterSpec a = make_cluster("alpha").nodes(80).gpus_per_node(8);
  ClusterSpec b = make_cluster("beta").nodes(80).gpus_per_node(8);
  JobSpec job = make_job().nodes(64).gpus(8);
  job.expected_run_s = 30 * 86400.0;
  std::vector<ClusterView> views = {ClusterView{&a, SiteHealth::healthy, 0},
                                    ClusterView{&b, SiteHealth::healthy, 0}};
  PlacementRequest req = request(job, "alpha");
  req.now_ms = 3'600'000;
  req.run_started_ms = 0;
  req.checkpoint_copy_s = {{"alpha", 0.0}, {"beta", 600.0}};
  views[0].history.mfu = 0.30;  // below the prior's 0.35: beta is likely better
  EXPECT_THAT(PlacementPipeline::standard().place(req, views).chosen,
              Optional(std::string("beta")));
  views[0].history.mfu = 0.55;  // the lottery's best: a trial would not pay
  EXPECT_THAT(PlacementPipeline::standard().place(req, views).chosen,
              Optional(std::string("alpha")));
  // Measured at 0.52 three weeks ago: close enough, and stale enough, to measure again.
  views[1].history.mfu = 0.52;
  views[1].history.mfu_hours = 48;
  views[1].history.mfu_measured_ms = req.now_ms - 21LL * 86'400'000;
  EXPECT_THAT(PlacementPipeline::standard().place(req, views).chosen,
              Optional(std::string("beta")));
  views[1].history.mfu_measured_ms = req.now_ms - 3'600'000;  // an hour ago: it stays
  EXPECT_THAT(PlacementPipeline::standard().place(req, views).chosen,
              Optional(std::string("alpha")));
}

TEST(GoodputPlacement, EqualClustersScoreEqually) {
  ClusterSpec a = make_cluster("a"), b = make_cluster("b");
  JobSpec job = make_job();
  PlacementDecision d = PlacementPipeline::standard().place(
      request(job),
      {ClusterView{&a, SiteHealth::healthy, 0}, ClusterView{&b, SiteHealth::healthy, 0}});
  EXPECT_DOUBLE_EQ(d.verdicts[0].score, d.verdicts[1].score);
  EXPECT_THAT(d.chosen, Optional(std::string("a")));
}

TEST(GoodputPlacement, RelativeScoresAreOverFeasibleClustersOnly) {
  // The faster cluster is down: the slower one is the best that can run the job and gets 1.
  TwoVendors s;
  JobSpec job = make_job();
  auto views = s.views();
  views[1].health = SiteHealth::down;
  PlacementDecision d = PlacementPipeline::standard().place(request(job), views);
  EXPECT_THAT(d.chosen, Optional(std::string("alpha")));
  EXPECT_THAT(d.verdicts[0].text(), StartsWith("goodput=6.000 "));
}

TEST(AdmissionFilter, OnlyActiveClustersGetWork) {
  ClusterSpec c = make_cluster("alpha");
  JobSpec job = make_job();
  AdmissionFilter f;
  ClusterView view{&c};
  EXPECT_EQ(f.reject(request(job), view), std::nullopt);
  view.admission = Admission::burn_in;
  EXPECT_THAT(f.reject(request(job), view), Optional(std::string("cluster is in burn-in")));
  view.admission = Admission::pending;
  EXPECT_THAT(f.reject(request(job), view), Optional(std::string("cluster is pending burn-in")));
}

TEST(AdmissionFilter, RunsInTheStandardPipelineAfterSiteHealth) {
  ClusterSpec a = make_cluster("alpha"), b = make_cluster("beta");
  JobSpec job = make_job();
  std::vector<ClusterView> views = {ClusterView{&a}, ClusterView{&b}};
  views[0].admission = Admission::burn_in;
  PlacementDecision d = PlacementPipeline::standard().place(request(job), views);
  EXPECT_THAT(d.chosen, Optional(std::string("beta")));
  EXPECT_EQ(d.verdicts[0].reason, "admission: cluster is in burn-in");
  // A site that is down says so first.
  views[0].health = SiteHealth::down;
  EXPECT_EQ(PlacementPipeline::standard().place(request(job), views).verdicts[0].reason,
            "site-healthy: site is down");
}

TEST(CapacityFilter, QuarantinedNodesAreNotCapacity) {
  ClusterSpec c = make_cluster("alpha").nodes(3).gpus_per_node(4);
  JobSpec two_nodes = make_job().nodes(2).gpus(4);
  CapacityFilter f;
  ClusterView view{&c};
  view.quarantined_nodes = {"alpha-n1"};
  EXPECT_EQ(gpus_free(request(two_nodes), view), 8);
  EXPECT_EQ(f.reject(request(two_nodes), view), std::nullopt);
  view.quarantined_nodes = {"alpha-n1", "alpha-n2"};
  EXPECT_THAT(f.reject(request(two_nodes), view),
              Optional(std::string(
                  "only 4 of 12 GPUs free, job needs 8 (quarantined nodes: alpha-n1 alpha-n2)")));
  // With an unhealthy node as well, each is named for why it is out; a node both unhealthy and
  // quarantined is counted once.
  view.quarantined_nodes = {"alpha-n1"};
  view.unhealthy_nodes = {"alpha-n1", "alpha-n0"};
  EXPECT_EQ(unusable_nodes(request(two_nodes), view),
            (std::vector<std::string>{"alpha-n0", "alpha-n1"}));
  EXPECT_THAT(f.reject(request(two_nodes), view),
              Optional(std::string("only 4 of 12 GPUs free, job needs 8 (unusable node: alpha-n0; "
                                   "quarantined node: alpha-n1)")));
}

}  // namespace
}  // namespace orch::testing
