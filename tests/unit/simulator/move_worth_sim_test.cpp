// Moving for what it is worth (issue 38, item 3) with the real brain in the simulator: three
// healthy clusters of the same GPUs at MFU 0.30, 0.40 and 0.55. Whatever order they are listed
// in, the job ends up on the best one; listed first, the best one is never left for a trial.
#include <gmock/gmock.h>

#include <algorithm>

#include "simulator/simulate.h"
#include "tests/unit/simulator/small_job.h"

namespace orch::sim {
namespace {

// An 8-node job on 10-node clusters fails about every 12 hours: a chance to move each time.
std::string lottery(const std::vector<std::pair<std::string, double>>& clusters) {
  std::string yaml = "name: three\nseed: 7\nseeds: 1\ndays: 6\nclusters:\n";
  for (const auto& [name, mfu] : clusters) {
    yaml += "  - {name: " + name + ", nodes: 10, mfu: " + std::to_string(mfu) +
            ", node_mtbf_h: 100, restart_s: 300, repair_h: 1}\n";
  }
  return yaml + kSmallJob + "  expected_run_days: 6\n";
}

JobMetrics orchestrate_on(const std::string& yaml) {
  auto s = parse_scenario(yaml, "three.yaml");
  EXPECT_TRUE(s.ok()) << s.error().message;
  auto run = run_policy(*s, "orchestrate", s->seed);
  EXPECT_TRUE(run.ok()) << run.error().message;
  return measure(*s, *run);
}

double share_on(const JobMetrics& m, const std::string& cluster) {
  double total = 0;
  for (const auto& [c, h] : m.productive_h_on) total += h;
  auto it = m.productive_h_on.find(cluster);
  return total > 0 && it != m.productive_h_on.end() ? it->second / total : 0;
}

TEST(SimulatedMoveWorth, ListedWorstFirstTheJobFindsTheBestCluster) {
  const JobMetrics m = orchestrate_on(lottery({{"slow", 0.30}, {"mid", 0.40}, {"best", 0.55}}));
  ASSERT_GT(m.interruptions, 3);
  EXPECT_GT(share_on(m, "best"), 0.5);
}

TEST(SimulatedMoveWorth, ListedBestFirstTheJobNeverLeavesIt) {
  const JobMetrics m = orchestrate_on(lottery({{"best", 0.55}, {"mid", 0.40}, {"slow", 0.30}}));
  ASSERT_GT(m.interruptions, 3);
  EXPECT_EQ(share_on(m, "best"), 1.0);
}

}  // namespace
}  // namespace orch::sim
