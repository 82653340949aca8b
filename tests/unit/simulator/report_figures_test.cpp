// The report's figures are honest (issue 45): policies compare in useful FLOPs, so on a mixed
// A100/H100 fleet the headline, the chart and orchestrate's gain agree with the FLOPs trained;
// each baseline is credited exactly the steps its model holds; the bound is the exact renewal
// ETTR (tau / (tau + C) without failures) with the first order beside it, and counts the job's
// own failures beside its nodes'.
#include <gmock/gmock.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "scheduler/health/goodput.h"
#include "scheduler/health/renewal.h"
#include "simulator/simulate.h"
#include "tests/unit/simulator/small_job.h"

namespace orch::sim {
namespace {

using ::testing::HasSubstr;

constexpr double kA100 = 312e12, kH100 = 989e12;

// Two clusters at the same MFU: an A100 one and an H100 one; 8 nodes of 8 GPUs for the job.
Scenario mixed_fleet() {
  Scenario s;
  s.name = "mixed";
  s.days = 10;
  SimCluster a100;
  a100.name = "a100";
  a100.nodes = 10;
  a100.peak_flops_per_gpu = kA100;
  a100.mfu = 0.4;
  SimCluster h100 = a100;
  h100.name = "h100";
  h100.peak_flops_per_gpu = kH100;
  s.clusters = {a100, h100};
  s.job.name = "llm";
  s.job.flops_per_step = 64 * kH100 * 0.4;  // a second a step on the H100s, 3.17 s on the A100s
  s.job.checkpoint_every = 1000;
  s.job.save_s = 30;
  s.job_nodes = 8;
  s.policies = {"orchestrate", "restart-in-place"};
  return s;
}

RunOutcome outcome(const std::string& policy, std::vector<KeptSteps> kept, double days) {
  RunOutcome r;
  r.policy = policy;
  r.seed = 1;
  r.simulated_s = days * 86400;
  r.truth.kept = std::move(kept);
  r.truth.steps_made = r.truth.kept_steps();
  return r;
}

TEST(ReportFigures, OnAMixedFleetTheHeadlineGainIsTheRatioOfTheFlopsTrained) {
  const Scenario s = mixed_fleet();
  const double a100_step_s = kH100 / kA100;
  // The brain trains on the H100s: 500,000 steps. The baseline stays on the A100s, where the same
  // ten days buy 8 x 27,000 = 216,000 (its GPU-hours are many, its FLOPs are few).
  std::vector<PolicyResult> policies(2);
  policies[0].policy = "orchestrate";
  policies[0].runs = {outcome("orchestrate", {{0, 500'000, 1.0, "h100"}}, 10)};
  policies[1].policy = "restart-in-place";
  policies[1].runs = {outcome("restart-in-place", {{0, 216'000, a100_step_s, "a100"}}, 10)};
  const Report r = make_report(s, std::move(policies));

  const JobMetrics& ours = r.policies[0].metrics[0];
  const JobMetrics& theirs = r.policies[1].metrics[0];
  EXPECT_DOUBLE_EQ(ours.useful_flops, 500'000 * s.job.flops_per_step);
  EXPECT_DOUBLE_EQ(theirs.useful_flops, 216'000 * s.job.flops_per_step);
  // GPU-hours alone would say the baseline did more: 64 GPUs x 190 h against 64 x 139 h.
  EXPECT_GT(theirs.useful_gpu_hours, ours.useful_gpu_hours);
  const double flops_ratio = ours.useful_flops / theirs.useful_flops;  // 2.31x
  ASSERT_TRUE(r.gain_over.count("restart-in-place"));
  EXPECT_DOUBLE_EQ(r.gain_over.at("restart-in-place").mean, flops_ratio);

  const std::string table = render_table(r);
  EXPECT_THAT(table, HasSubstr("useful EFLOP"));
  EXPECT_THAT(table, HasSubstr("2.31x"));
  // The headline is the EFLOP trained: 500,000 x 25,318 PFLOP a step = 12,659 EFLOP.
  EXPECT_THAT(table, HasSubstr("12,659"));
  EXPECT_THAT(table, HasSubstr("5,469"));
  const auto json = report_json(r);
  EXPECT_DOUBLE_EQ(json["policies"][0]["useful_flops_mean"].get<double>(), ours.useful_flops);
  EXPECT_DOUBLE_EQ(json["policies"][1]["orchestrate_gain_mean"].get<double>(), flops_ratio);
  // The chart's bars are the same EFLOP.
  const std::string svg = render_svg(r);
  EXPECT_THAT(svg, HasSubstr("useful EFLOP per policy"));
  EXPECT_THAT(svg, HasSubstr("orchestrate: 12,659"));
  EXPECT_THAT(svg, HasSubstr("restart-in-place: 5,469"));
}

TEST(ReportFigures, WithoutFailuresTheBoundIsTheIntervalOverTheIntervalAndTheSave) {
  Scenario s = mixed_fleet();
  for (auto& c : s.clusters) {
    c.law.mtbf_s = std::numeric_limits<double>::infinity();
    c.restart_s = 0;
  }
  s.job.checkpoint_every = 100;  // tau = 100 s on the H100s, C = 40 s
  s.job.save_s = 40;
  const JobMetrics m = measure(s, outcome("orchestrate", {{0, 1000, 1.0, "h100"}}, 1));
  EXPECT_DOUBLE_EQ(m.bound_ettr, 100.0 / 140.0);   // 0.714
  EXPECT_NEAR(m.first_order_bound, 0.600, 1e-12);  // what the column said before
}

TEST(ReportFigures, ARunWithoutFailuresReachesItsBound) {
  // One node that does not fail in a day; no restart: its ETTR is tau / (tau + C).
  const std::string yaml = R"(
name: quiet
days: 1
policies: [restart-in-place]
failures: {node_mtbf_h: 870000}
clusters:
  - {name: a, nodes: 1, mfu: 0.4, restart_s: 0}
job: {name: q, nodes: 1, gpus_per_node: 8, flops_per_token: 3.1648e12, tokens_per_step: 1000,
      checkpoint_every: 100, save_s: 40}
)";
  auto s = parse_scenario(yaml, "quiet.yaml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto run = run_policy(*s, "restart-in-place", 1);
  ASSERT_TRUE(run.ok()) << run.error().message;
  const JobMetrics m = measure(*s, *run);
  ASSERT_EQ(m.interruptions, 0);
  EXPECT_NEAR(m.bound_ettr, 100.0 / 140.0, 1e-4);
  EXPECT_NEAR(m.ettr, m.bound_ettr, 0.002);
}

TEST(ReportFigures, TheBoundCountsTheJobsOwnFailuresBesideItsNodes) {
  Scenario s = mixed_fleet();
  s.clusters[1].law.mtbf_s = 800 * 3600.0;  // 8 nodes: 100 h
  s.job.mtbf_s = 25 * 3600.0;               // and the job's own: together 20 h
  const JobMetrics m = measure(s, outcome("orchestrate", {{0, 1000, 1.0, "h100"}}, 1));
  const double restart = s.clusters[1].restart_s + s.poll_s / 2;
  EXPECT_DOUBLE_EQ(m.bound_ettr, renewal_ettr(30, 1000, restart, 20 * 3600.0));
  EXPECT_DOUBLE_EQ(m.first_order_bound, expected_ettr(30, 1000, restart, 20 * 3600.0));
}

std::int64_t credited(const JobTruth& t) {
  return std::accumulate(t.kept.begin(), t.kept.end(), std::int64_t{0},
                         [](std::int64_t n, const KeptSteps& k) { return n + (k.to - k.from); });
}

TEST(ReportFigures, EachBaselineIsCreditedExactlyTheStepsItsModelHolds) {
  // Failover-only goes back and forth between two clusters and resumes, on its return, from a
  // checkpoint ahead of what it had kept elsewhere: every seed credits each step once.
  const std::string yaml = std::string(R"(
name: back-and-forth
seed: 1
days: 4
clusters:
  - {name: a, nodes: 9, mfu: 0.40, node_mtbf_h: 60, restart_s: 300, repair_h: 1}
  - {name: b, nodes: 9, mfu: 0.30, node_mtbf_h: 60, restart_s: 300, repair_h: 1}
)") + kSmallJob;
  auto s = parse_scenario(yaml, "back-and-forth.yaml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  int comebacks = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    for (const char* policy : {"failover-only", "restart-in-place"}) {
      auto run = run_policy(*s, policy, seed);
      ASSERT_TRUE(run.ok()) << run.error().message;
      const JobTruth& t = run->truth;
      EXPECT_EQ(credited(t), t.kept_steps()) << policy << " seed " << seed;
      std::int64_t at = 0;
      for (const KeptSteps& k : t.kept) {
        EXPECT_EQ(k.from, at) << policy << " seed " << seed;
        at = k.to;
      }
      EXPECT_EQ(t.steps_made - t.steps_lost, t.kept_steps());
      const JobMetrics m = measure(*s, *run);
      EXPECT_DOUBLE_EQ(m.useful_flops, static_cast<double>(t.kept_steps()) * s->job.flops_per_step);
      // Failover-only moves on every failure, so a model of several runs' steps was resumed
      // from a checkpoint left behind two moves or more earlier: ahead of what the job had
      // kept on the other cluster (which starts from its own, older checkpoints).
      std::set<std::string> failed_on;
      for (const Interruption& i : t.interruptions) failed_on.insert(i.cluster);
      if (std::string(policy) == "failover-only" && failed_on.size() == 2 && t.kept.size() >= 2) {
        ++comebacks;
      }
    }
  }
  EXPECT_GT(comebacks, 0);
}

}  // namespace
}  // namespace orch::sim
