// Every policy over every seed (simulate.h).
#include "simulator/simulate.h"

#include "simulator/baseline_run.h"
#include "simulator/orchestrate_run.h"

namespace orch::sim {

Result<RunOutcome> run_policy(const Scenario& scenario, const std::string& policy,
                              std::uint64_t seed) {
  if (policy == kPolicyOrchestrate) return run_orchestrate(scenario, seed);
  return run_baseline(scenario, seed, policy);
}

Result<Report> simulate(const Scenario& scenario,
                        const std::function<void(const RunOutcome&)>& progress) {
  std::vector<PolicyResult> results;
  for (const auto& policy : scenario.policies) {
    PolicyResult p;
    p.policy = policy;
    for (int i = 0; i < scenario.seeds; ++i) {
      auto run = run_policy(scenario, policy, scenario.seed + static_cast<std::uint64_t>(i));
      if (!run) return run.error();
      if (progress) progress(*run);
      p.runs.push_back(std::move(*run));
    }
    results.push_back(std::move(p));
  }
  return make_report(scenario, std::move(results));
}

}  // namespace orch::sim
