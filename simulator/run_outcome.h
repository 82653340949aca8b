#pragma once
// What one policy did over one seed of a scenario: the world's ground truth of the job, and
// what running it cost (simulator/report.h turns a set of these into the report).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "simulator/world/sim_world.h"

namespace orch::sim {

struct RunOutcome {
  std::string policy;
  std::uint64_t seed = 0;
  double simulated_s = 0;     // the window simulated
  JobTruth truth;             // of the scenario's job, from the world
  int nodes_quarantined = 0;  // nodes the policy took out of service (orchestrate's ledger)
  std::int64_t events = 0;  // events the policy's controller handled (the brain's, for orchestrate)
  std::int64_t events_refused = 0;  // of those, how many it answered with an error
  double wall_s = 0;                // wall time the run took
  // Orchestrate only: where each recovery's seconds went, from the brain's own attempt rows
  // (scheduler/health/recovery_breakdown.h), a sample per recovery and part: "detection",
  // "backoff", "placing", "site", "startup". The brain's view: detection runs from the last
  // line it saw, not from the failure itself (the world's truth is in `truth`).
  std::map<std::string, std::vector<double>> recovery_parts;
};

}  // namespace orch::sim
