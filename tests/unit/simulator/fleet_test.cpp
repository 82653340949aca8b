// The fleet simulator (simulator/fleet_*.h): a fleet scenario reads with its clusters' prices,
// teams and job classes, mistakes named with file:line:col; a seed's workload is the same twice;
// every job goes through the real brain at its arrival time; a hero preempts; the report's
// figures; `--compare` pairs two scenarios seed by seed.
#include <gmock/gmock.h>

#include <cmath>
#include <map>
#include <string>

#include "simulator/fleet_report.h"
#include "simulator/fleet_run.h"
#include "simulator/fleet_scenario.h"

namespace orch::sim {
namespace {

using ::testing::HasSubstr;

// Two clusters of 6 nodes, two teams, 24 short jobs over about 8 hours.
constexpr const char* kSmallFleet = R"(name: small-fleet
seed: 3
seeds: 2
days: 1
poll_s: 60
tick_s: 60
clusters:
  - {name: a, nodes: 6, mfu: 0.40, restart_s: 120, progress_every_s: 900,
     price: {per_gpu_hour: 2.00, currency: USD}}
  - {name: b, nodes: 6, mfu: 0.30, restart_s: 120, progress_every_s: 900,
     price: {per_gpu_hour: 1.00, currency: USD}}
priority_classes: {hero: 1000, normal: 0}
teams:
  llm: {gpus: 64}
  research: {gpus: 32}
workload:
  jobs: 24
  arrivals_per_hour: 3
  classes:
    - {name: train, share: 1, team: llm, priority: normal, nodes: [1, 3], hours: [0.5, 2]}
    - {name: ablate, share: 1, team: research, priority: normal, nodes: 1, hours: [0.2, 1]}
)";

FleetScenario parse(const std::string& text) {
  auto s = parse_fleet_scenario(text, "fleet.yaml");
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? *s : FleetScenario{};
}

std::string error_of(const std::string& text) {
  auto s = parse_fleet_scenario(text, "fleet.yaml");
  return s.ok() ? std::string("(it read)") : s.error().message;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::map<std::string, double> figures_of(const FleetScenario& s, const FleetRunOutcome& run) {
  std::map<std::string, double> out;
  for (const auto& f : fleet_figures(s, run)) out[f.key] = f.value;
  return out;
}

TEST(FleetScenario, AFleetReadsItsClustersPricesTeamsAndJobClasses) {
  EXPECT_TRUE(is_fleet_scenario(kSmallFleet));
  EXPECT_FALSE(is_fleet_scenario("name: x\njob: {nodes: 1}\n"));
  const FleetScenario s = parse(kSmallFleet);
  ASSERT_EQ(s.clusters.size(), 2u);
  EXPECT_DOUBLE_EQ(s.cluster_specs[0].price.per_gpu_hour, 2.0);
  EXPECT_EQ(s.currency(), "USD");
  EXPECT_EQ(s.scheduling.teams.at("research").gpus, 32);
  EXPECT_EQ(s.scheduling.priority_classes.at("hero"), 1000);
  ASSERT_EQ(s.classes.size(), 2u);
  EXPECT_EQ(s.classes[0].nodes_min, 1);
  EXPECT_EQ(s.classes[0].nodes_max, 3);
  EXPECT_EQ(s.classes[1].nodes_min, 1);
  EXPECT_EQ(s.classes[1].nodes_max, 1);
  EXPECT_DOUBLE_EQ(s.classes[1].hours_max, 1.0);
  EXPECT_EQ(s.jobs, 24);
}

TEST(FleetScenario, AJobClassOfATeamWithoutAQuotaIsRefusedWhereItIsWritten) {
  const std::string e = error_of(replaced(kSmallFleet, "team: research,", "team: reserch,"));
  EXPECT_THAT(e, HasSubstr("fleet.yaml:21:"));
  EXPECT_THAT(e, HasSubstr("team \"reserch\" is not in `teams:`"));
}

TEST(FleetScenario, AnUnknownPriorityClassARangeHighFirstAndAJobTooBigAreRefused) {
  EXPECT_THAT(
      error_of(replaced(kSmallFleet, "priority: normal, nodes: 1", "priority: urgent, nodes: 1")),
      HasSubstr("fleet.yaml:21:"));
  EXPECT_THAT(error_of(replaced(kSmallFleet, "hours: [0.5, 2]", "hours: [2, 0.5]")),
              HasSubstr("low first"));
  EXPECT_THAT(error_of(replaced(kSmallFleet, "nodes: [1, 3]", "nodes: [1, 7]")),
              HasSubstr("more than any cluster has"));
  EXPECT_THAT(error_of(replaced(kSmallFleet, "jobs: 24", "jbos: 24")), HasSubstr("jobs"));
  EXPECT_THAT(error_of(replaced(kSmallFleet, "price: {per_gpu_hour: 1.00, currency: USD}",
                                "price: {per_gpu_hour: 1.00, currency: EUR}")),
              HasSubstr("EUR"));
}

TEST(FleetWorkload, ASeedDrawsTheSameWorkloadTwiceAndAnotherSeedAnother) {
  const FleetScenario s = parse(kSmallFleet);
  const auto a = draw_workload(s, 3);
  const auto b = draw_workload(s, 3);
  const auto c = draw_workload(s, 4);
  ASSERT_EQ(a.size(), 24u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].at_s, b[i].at_s);
    EXPECT_EQ(a[i].job.total_steps, b[i].job.total_steps);
    EXPECT_EQ(a[i].nodes, b[i].nodes);
    if (i > 0) {
      EXPECT_GE(a[i].at_s, a[i - 1].at_s);
    }
    EXPECT_GE(a[i].nodes, 1);
    EXPECT_LE(a[i].nodes, s.classes[a[i].job_class].nodes_max);
  }
  EXPECT_NE(a[5].at_s, c[5].at_s);
  // A job's length is its hours on the fastest cluster, in steps of step_s there.
  const FleetJobClass& k = s.classes[a[0].job_class];
  const double hours = static_cast<double>(a[0].job.total_steps) * k.step_s / 3600;
  EXPECT_GE(hours, k.hours_min - 0.01);
  EXPECT_LE(hours, k.hours_max + 0.01);
}

TEST(FleetRun, EveryJobGoesThroughTheBrainAndTheFiguresAddUp) {
  const FleetScenario s = parse(kSmallFleet);
  auto run = run_fleet(s, 3);
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_EQ(run->jobs.size(), 24u);
  int completed = 0;
  for (const auto& j : run->jobs) {
    EXPECT_FALSE(j.refused) << j.name;
    ASSERT_TRUE(j.first_step_s.has_value()) << j.name;
    EXPECT_GE(*j.first_step_s, j.arrival_s) << j.name;
    if (j.completed_s) {
      ++completed;
      EXPECT_EQ(j.state, "succeeded") << j.name;
    }
  }
  EXPECT_EQ(completed, 24);
  const auto f = figures_of(s, *run);
  EXPECT_EQ(f.at("jobs_arrived"), 24);
  EXPECT_EQ(f.at("jobs_completed"), 24);
  EXPECT_EQ(f.at("waiting_at_end"), 0);
  // The wait to the first step is at least the cluster's restart (120 s).
  EXPECT_GE(f.at("wait_p50_h.normal"), 120.0 / 3600 - 1e-9);
  EXPECT_LE(f.at("wait_p50_h.normal"), f.at("wait_p90_h.normal"));
  EXPECT_LE(f.at("wait_p90_h.normal"), f.at("wait_p99_h.normal"));
  EXPECT_TRUE(f.count("wait_p50_h.team.llm"));
  double useful = 0;
  for (const auto& c : run->clusters) {
    EXPECT_LE(c.useful_gpu_h, c.held_gpu_h + 1e-6) << c.name;
    useful += c.useful_gpu_h;
    const double u = f.at("utilisation." + c.name);
    EXPECT_GE(u, 0);
    EXPECT_LE(u, 1);
    // Renting every GPU of a cluster for a day at its price.
    const double price = c.name == "a" ? 2.0 : 1.0;
    EXPECT_NEAR(c.rent, price * c.gpus * 24, 1e-6);
    if (c.useful_gpu_h > 0) {
      EXPECT_GE(f.at("cost_per_useful_gpu_h." + c.name), price);
      EXPECT_GE(f.at("held_cost_per_useful_gpu_h." + c.name), price - 1e-9);
    }
  }
  EXPECT_NEAR(f.at("useful_gpu_h.fleet"), useful, 1e-6);
  EXPECT_GT(useful, 0);
}

TEST(FleetRun, TheSameSeedGivesTheSameFiguresTwice) {
  const FleetScenario s = parse(kSmallFleet);
  auto first = run_fleet(s, 3);
  auto second = run_fleet(s, 3);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(second.ok());
  const auto a = fleet_figures(s, *first);
  const auto b = fleet_figures(s, *second);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].key, b[i].key);
    EXPECT_EQ(a[i].value, b[i].value) << a[i].key;
  }
}

TEST(FleetRun, AHeroArrivingAtAFullClusterPreemptsAndStartsAtOnce) {
  // One cluster of 4 nodes filled by four long one-node jobs, then a 4-node hero minutes later.
  const FleetScenario s = parse(R"(name: hero
seed: 1
days: 1
poll_s: 60
tick_s: 60
clusters:
  - {name: a, nodes: 4, mfu: 0.40, restart_s: 60, progress_every_s: 600}
priority_classes: {hero: 1000, normal: 0}
workload:
  jobs: 5
  arrivals_per_hour: 20
  classes:
    - {name: long, share: 1, priority: normal, nodes: 1, hours: 10}
    - {name: hero, share: 1, priority: hero, nodes: 4, hours: 1}
)");
  // The seed whose draws give four long jobs first and the hero fifth.
  std::uint64_t seed = 1;
  for (; seed < 500; ++seed) {
    const auto w = draw_workload(s, seed);
    bool long_first = true;
    for (int i = 0; i < 4; ++i) long_first = long_first && w[i].job_class == 0;
    if (long_first && w[4].job_class == 1) break;
  }
  ASSERT_LT(seed, 500u);
  auto run = run_fleet(s, seed);
  ASSERT_TRUE(run.ok()) << run.error().message;
  const auto f = figures_of(s, *run);
  EXPECT_GE(f.at("preemptions.fleet"), 1);
  EXPECT_GE(f.at("preemptions.a"), 1);
  const FleetJobOutcome& hero = run->jobs[4];
  EXPECT_EQ(hero.job_class, "hero");
  ASSERT_TRUE(hero.first_step_s.has_value());
  // It waits for its victims' grace (at most 300 s) and its restart, not for a long job's end.
  EXPECT_LT(*hero.first_step_s - hero.arrival_s, 1800);
  EXPECT_TRUE(hero.completed_s.has_value());
  EXPECT_TRUE(f.count("wait_p50_h.hero"));
  EXPECT_TRUE(f.count("wait_p50_h.normal"));
}

TEST(FleetCompare, AScenarioAgainstItselfDiffersByNothing) {
  const FleetScenario s = parse(kSmallFleet);
  std::vector<FleetRunOutcome> runs;
  for (std::uint64_t seed : {3, 4}) {
    auto run = run_fleet(s, seed);
    ASSERT_TRUE(run.ok());
    runs.push_back(*run);
  }
  const FleetReport a = make_fleet_report(s, runs);
  const FleetComparison c = compare_fleets(a, a);
  ASSERT_FALSE(c.differences.empty());
  for (const auto& d : c.differences) {
    EXPECT_EQ(d.mean, 0) << d.key;
    EXPECT_EQ(d.ci95, 0) << d.key;
    EXPECT_EQ(d.n, 2u);
  }
  EXPECT_THAT(render_comparison_table(c), HasSubstr("B - A"));
  EXPECT_TRUE(comparison_json(c)["differences"].contains("utilisation.fleet"));
}

TEST(FleetCompare, ATeamHeldToASmallQuotaWithoutBorrowingWaitsLongerOnEverySeed) {
  const FleetScenario a = parse(kSmallFleet);
  const FleetScenario b =
      parse(replaced(kSmallFleet, "research: {gpus: 32}", "research: {gpus: 8, borrow: false}"));
  std::vector<FleetRunOutcome> ra, rb;
  for (std::uint64_t seed : {3, 4, 5}) {
    auto x = run_fleet(a, seed);
    auto y = run_fleet(b, seed);
    ASSERT_TRUE(x.ok());
    ASSERT_TRUE(y.ok());
    ra.push_back(*x);
    rb.push_back(*y);
  }
  const FleetComparison c = compare_fleets(make_fleet_report(a, ra), make_fleet_report(b, rb));
  const FleetDifference* wait = nullptr;
  for (const auto& d : c.differences) {
    if (d.key == "wait_p90_h.team.research") wait = &d;
  }
  ASSERT_NE(wait, nullptr);
  EXPECT_GT(wait->mean, 0);
  EXPECT_GT(wait->b_mean, wait->a_mean);
  EXPECT_EQ(wait->n, 3u);
  const std::string table = render_fleet_table(make_fleet_report(b, rb));
  EXPECT_THAT(table, HasSubstr("wait to first step p90, team research (h)"));
  EXPECT_THAT(table, HasSubstr("USD per useful GPU-hour"));
}

}  // namespace
}  // namespace orch::sim
