// The simulator against theory and published data (issue 19):
// - exponential failures, a fixed save cost C and restart R, the optimal interval, through the
//   real brain: the job's effective training time ratio is within a point of
//   1 - C/tau - (tau/2 + R)/M;
// - Llama 3's pre-training (16,384 H100s for 54 days): unexpected interruptions within 10% of
//   the 419 Meta reported, and an ETTR above 90%. Here under the restart-in-place controller,
//   which takes seconds; through the brain it takes 5 minutes in a Release build (15 in this
//   one), so that run is recorded in bench/RESULTS.md instead (404 interruptions, ETTR 0.930).
#include <gmock/gmock.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "scheduler/health/goodput.h"
#include "simulator/simulate.h"

namespace orch::sim {
namespace {

TEST(Validation, ExponentialFailuresAtYoungsIntervalLoseWhatTheFirstOrderTheorySays) {
  // A 16-node job whose nodes fail every 128 h: M = 8 h. C = 60 s, R = 600 s, steps of 1 s,
  // saves at Young's tau = sqrt(2 C M) = 1,859 s. Every node alike, so orchestrate's quarantine
  // rule is set off (it would only take healthy nodes out); ~500 failures in 170 days.
  const double m = 8 * 3600.0, c = 60, r = 600;
  const double tau = young_interval_s(c, m);
  std::ostringstream yaml;
  yaml << "name: exponential\nseed: 11\ndays: 170\npolicies: [orchestrate]\n"
       << "failures: {law: exponential, node_mtbf_h: 128}\n"
       << "clusters:\n  - name: solo\n    nodes: 24\n    mfu: 0.4\n    restart_s: " << r
       << "\n    repair_h: 0.5\n    progress_every_s: 600\n"
       << "    quarantine: {failures: 1000000, retire_after: 1000000}\n"
       << "job:\n  name: exp\n  nodes: 16\n  gpus_per_node: 8\n  flops_per_token: "
       << 128 * 989e12 * 0.4 / 1000
       << "\n  tokens_per_step: 1000\n  checkpoint_every: " << std::llround(tau)
       << "\n  save_s: " << c << "\n";
  auto s = parse_scenario(yaml.str(), "exponential.yaml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto run = run_policy(*s, "orchestrate", s->seed);
  ASSERT_TRUE(run.ok()) << run.error().message;
  const JobMetrics got = measure(*s, *run);
  const double theory = 1 - c / tau - (tau / 2 + r) / m;
  RecordProperty("ettr", std::to_string(got.ettr));
  RecordProperty("first_order", std::to_string(theory));
  EXPECT_GT(got.interruptions, 400);
  EXPECT_NEAR(got.ettr, theory, 0.01) << got.interruptions << " interruptions";
}

TEST(Validation, Llama3AtScaleHasTheInterruptionsMetReportedAndAnEttrAbove90Percent) {
  const std::string path = std::string(ORCH_SOURCE_DIR) + "/examples/simulate/llama3.yaml";
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  auto s = parse_scenario(text.str(), path);
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto run = run_policy(*s, "restart-in-place", s->seed);
  ASSERT_TRUE(run.ok()) << run.error().message;
  const JobMetrics got = measure(*s, *run);
  RecordProperty("interruptions", got.interruptions);
  RecordProperty("ettr", std::to_string(got.ettr));
  EXPECT_NEAR(got.interruptions, 419, 41.9);
  EXPECT_GT(got.ettr, 0.90);
}

}  // namespace
}  // namespace orch::sim
