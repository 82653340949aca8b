// `orchestrate simulate` (simulator/simulate.h): the real brain and the baselines over one
// simulated world. The same seed gives the same report, bit for bit; failover-only moves on
// every failure while restart-in-place stays; orchestrate quarantines the nodes that fail and
// keeps the job's progress; the report reads as a table, JSON and a chart.
#include <gmock/gmock.h>

#include <set>
#include <string>

#include "simulator/simulate.h"
#include "tests/unit/simulator/small_job.h"

namespace orch::sim {
namespace {

using ::testing::HasSubstr;

// Two small clusters of 10 nodes; b is faster but a fifth of its nodes are lemons. An 8-node
// job fails about every 12 hours on a.
constexpr const char* kSmallClusters = R"(
name: small
seed: 5
seeds: 2
days: 3
clusters:
  - {name: a, nodes: 10, mfu: 0.30, node_mtbf_h: 100, restart_s: 300, repair_h: 1}
  - name: b
    nodes: 10
    mfu: 0.45
    node_mtbf_h: 100
    restart_s: 300
    repair_h: 1
    lemons: {fraction: 0.2, multiplier: 20}
)";

Scenario small() {
  auto s = parse_scenario(std::string(kSmallClusters) + kSmallJob, "small.yaml");
  EXPECT_TRUE(s.ok()) << s.error().message;
  return *s;
}

// The report without the wall time each run took (the one thing a seed does not decide).
nlohmann::json without_wall_time(nlohmann::json j) {
  for (auto& p : j["policies"]) {
    for (auto& r : p["runs"]) r.erase("wall_s");
  }
  return j;
}

TEST(Simulate, TheSameSeedGivesTheSameReportTwice) {
  const Scenario s = small();
  auto first = simulate(s);
  auto second = simulate(s);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(second.ok()) << second.error().message;
  const auto a = without_wall_time(report_json(*first));
  EXPECT_EQ(a, without_wall_time(report_json(*second)));
  // And another seed gives another world.
  Scenario other = s;
  other.seed = 6;
  auto third = simulate(other);
  ASSERT_TRUE(third.ok());
  EXPECT_NE(a, without_wall_time(report_json(*third)));
}

TEST(Simulate, FailoverOnlyMovesOnEveryFailureWhileRestartInPlaceStays) {
  const Scenario s = small();
  auto in_place = run_policy(s, "restart-in-place", 5);
  auto failover = run_policy(s, "failover-only", 5);
  ASSERT_TRUE(in_place.ok());
  ASSERT_TRUE(failover.ok());
  const JobMetrics stay = measure(s, *in_place);
  const JobMetrics move = measure(s, *failover);
  ASSERT_GT(stay.interruptions, 0);
  EXPECT_EQ(stay.productive_h_on.size(), 1u);
  EXPECT_TRUE(stay.productive_h_on.count("a"));
  ASSERT_GT(move.interruptions, 0);
  // It failed on both clusters. (Its model's steps are all one cluster's: without replication
  // a move resumes from the checkpoints the other cluster holds, and every step kept is one the
  // final model holds, issue 45.)
  std::set<std::string> failed_on;
  for (const Interruption& i : failover->truth.interruptions) failed_on.insert(i.cluster);
  EXPECT_EQ(failed_on.size(), 2u);
  // Without replication a move goes back to the checkpoint the other site last had.
  EXPECT_GT(move.steps_lost, stay.steps_lost);
  EXPECT_EQ(stay.nodes_quarantined, 0);
}

TEST(Simulate, OrchestrateRunsTheRealBrainWhichQuarantinesFailedNodesAndKeepsProgress) {
  const Scenario s = small();
  auto run = run_policy(s, "orchestrate", 5);
  ASSERT_TRUE(run.ok()) << run.error().message;
  const JobMetrics m = measure(s, *run);
  EXPECT_GT(run->events, 100);
  EXPECT_EQ(run->events_refused, 0);
  ASSERT_GT(m.interruptions, 0);
  EXPECT_GT(m.nodes_quarantined, 0);
  EXPECT_GT(m.ettr, 0.5);
  ASSERT_TRUE(m.median_detect_s.has_value());
  EXPECT_LE(*m.median_detect_s, s.poll_s);
  ASSERT_TRUE(m.median_restart_s.has_value());
  EXPECT_GE(*m.median_restart_s, s.clusters[0].restart_s);
}

// Issue 38: the brain's recoveries cost nothing of their own. Every failure is seen at the
// site's next poll, even one that happened just before a brain tick moved time past it, and
// the job is placed again in the event that saw it: each interruption's restart is at most a
// poll, the cluster's restart time and the 10 s backoff of a second failure in a row.
TEST(Simulate, EveryFailureIsSeenWithinAPollAndResumedWithoutAWaitOfTheBrainsOwn) {
  // One cluster whose 8-node job fails about every 2.5 hours, and prints a line only every
  // half hour: a failure the brain missed would be seen only at the next line.
  auto parsed = parse_scenario(R"(
name: often
seed: 1
days: 3
poll_s: 30
tick_s: 7
clusters:
  - {name: a, nodes: 40, mfu: 0.30, node_mtbf_h: 20, restart_s: 300, repair_h: 1,
     progress_every_s: 1800}
job: {name: often, nodes: 8, gpus_per_node: 8, parameters: 1e9, tokens_per_step: 1048576,
      checkpoint_every: 3000, save_s: 20, checkpoint_gb: 10}
)",
                               "often.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Scenario& s = *parsed;
  for (std::uint64_t seed : {1, 2, 3}) {
    auto run = run_policy(s, "orchestrate", seed);
    ASSERT_TRUE(run.ok()) << run.error().message;
    ASSERT_FALSE(run->truth.interruptions.empty());
    for (const Interruption& i : run->truth.interruptions) {
      if (!i.seen_s || !i.resumed_s) continue;  // the window ended first
      const SimCluster* c = nullptr;
      for (const auto& cluster : s.clusters) {
        if (cluster.name == i.cluster) c = &cluster;
      }
      ASSERT_NE(c, nullptr);
      EXPECT_LE(*i.seen_s - i.at_s, s.poll_s) << "seed " << seed << ", failure at " << i.at_s;
      EXPECT_LE(*i.resumed_s - i.at_s, s.poll_s + 300 + 10 + s.poll_s)
          << "seed " << seed << ", failure at " << i.at_s << " (" << i.cause << ")";
    }
  }
}

TEST(Simulate, TheReportReadsAsATableJsonAndAChart) {
  Scenario s = small();
  s.seeds = 1;
  auto report = simulate(s);
  ASSERT_TRUE(report.ok());
  const std::string table = render_table(*report);
  EXPECT_THAT(table, HasSubstr("scenario small: 3 days"));
  // Where each seed spent most of its hours: restart-in-place never leaves the first cluster.
  EXPECT_THAT(table, ::testing::MatchesRegex("(.|\n)*restart-in-place: interruptions by cause:"
                                             "[^\n]*seeds mostly on: a 1;\n(.|\n)*"));
  for (const char* p : {"orchestrate", "restart-in-place", "failover-only"}) {
    EXPECT_THAT(table, HasSubstr(p));
  }
  const auto json = report_json(*report);
  ASSERT_EQ(json["policies"].size(), 3u);
  EXPECT_TRUE(json["policies"][1].contains("orchestrate_gain_mean"));
  EXPECT_TRUE(json["policies"][0]["runs"][0].contains("interruptions_by_cause"));
  const std::string svg = render_svg(*report);
  EXPECT_THAT(svg, ::testing::StartsWith("<svg"));
  EXPECT_THAT(svg, HasSubstr("</svg>"));
  EXPECT_THAT(svg, HasSubstr("failover-only"));
}

TEST(Simulate, AConfidenceIntervalUsesStudentsT) {
  const Interval one = mean_interval({5});
  EXPECT_DOUBLE_EQ(one.mean, 5);
  EXPECT_DOUBLE_EQ(one.half_width, 0);
  // Mean 2, sample sd 1, n 3: t(0.975, 2) = 4.30265.
  const Interval three = mean_interval({1, 2, 3});
  EXPECT_DOUBLE_EQ(three.mean, 2);
  EXPECT_NEAR(three.half_width, 4.302652729911275 / std::sqrt(3.0), 1e-9);
}

}  // namespace
}  // namespace orch::sim
