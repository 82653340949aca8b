#pragma once
// A whole simulation: every policy of the scenario over every seed, on the same world per
// seed (the failures a seed draws do not depend on what a policy does), into one report.

#include <functional>
#include <string>

#include "scheduler/common/result.h"
#include "simulator/report.h"
#include "simulator/scenario.h"

namespace orch::sim {

// One run of one policy over one seed.
Result<RunOutcome> run_policy(const Scenario& scenario, const std::string& policy,
                              std::uint64_t seed);

// `progress`, when set, hears of each run as it ends ("orchestrate seed 3: 1.2 s").
Result<Report> simulate(const Scenario& scenario,
                        const std::function<void(const RunOutcome&)>& progress = {});

}  // namespace orch::sim
