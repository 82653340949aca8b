#pragma once
// The baselines orchestrate is compared with, over the same world and seed (docs/simulate.md):
//
// - restart-in-place: what a team that babysits a job by hand does. The job runs on the first
//   cluster of the scenario that fits it; after any failure it is relaunched there, from the
//   newest checkpoint in its checkpoint directory, on whatever nodes the site grants (no
//   quarantine: a node back from repair is used again). It waits out outages.
// - failover-only: modelled on SkyPilot's managed jobs. A controller polls every 15 s; any
//   failure, or the cluster not answering for 3 minutes, moves the job to the next cluster in
//   the scenario's order (round robin), from the newest checkpoint that cluster holds: no
//   health, MFU or goodput scoring, no quarantine, no checkpoint replication.
//
// Both drive the world through the same SimSite ports the brain's workers use.

#include <cstdint>
#include <string_view>

#include "scheduler/common/result.h"
#include "simulator/run_outcome.h"
#include "simulator/scenario.h"

namespace orch::sim {

inline constexpr double kFailoverPollS = 15;
inline constexpr double kFailoverUnreachableS = 180;

Result<RunOutcome> run_baseline(const Scenario& scenario, std::uint64_t seed,
                                std::string_view policy);

}  // namespace orch::sim
