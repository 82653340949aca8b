// The fleet simulator's acceptance (issue 45): examples/simulate/fleet-quotas.yaml, 500 jobs of
// four teams over three clusters, through the real brain: every job arrives, the report has
// wait percentiles per priority, utilisation and cost per useful GPU-hour per cluster; the wall
// time is printed (under a minute in a Release build; docs/simulate.md gives the figures).
#include <gmock/gmock.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "simulator/fleet_report.h"
#include "simulator/fleet_run.h"

namespace orch::sim {
namespace {

TEST(FleetScale, FiveHundredJobsOfFourTeamsOverThreeClustersRunThroughTheBrain) {
  const std::string path = std::string(ORCH_SOURCE_DIR) + "/examples/simulate/fleet-quotas.yaml";
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  auto s = parse_fleet_scenario(text.str(), path);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->jobs, 500);
  ASSERT_EQ(s->clusters.size(), 3u);
  ASSERT_EQ(s->scheduling.teams.size(), 4u);
  auto run = run_fleet(*s, s->seed);
  ASSERT_TRUE(run.ok()) << run.error().message;
  std::printf("500 jobs, %.1f simulated days: %.1f s wall, %lld brain events\n", s->days,
              run->wall_s, static_cast<long long>(run->events));
  std::map<std::string, double> f;
  for (const auto& x : fleet_figures(*s, *run)) f[x.key] = x.value;
  EXPECT_EQ(f.at("jobs_arrived"), 500);
  EXPECT_GT(f.at("jobs_completed"), 400);
  for (const char* p : {"hero", "production", "ablation"}) {
    EXPECT_TRUE(f.count(std::string("wait_p90_h.") + p)) << p;
  }
  for (const char* c : {"alpha", "beta", "gamma"}) {
    EXPECT_GT(f.at(std::string("utilisation.") + c), 0.2) << c;
    EXPECT_GT(f.at(std::string("cost_per_useful_gpu_h.") + c), 0) << c;
  }
  std::printf("%s", render_fleet_table(make_fleet_report(*s, {*run})).c_str());
}

}  // namespace
}  // namespace orch::sim
