#pragma once
// The `orchestrate` policy of a simulation: the real brain, the same code as the server, over
// an in-memory store and a simulated clock, with the real site and storage workers driving
// the world's sites (SimSite) and the simulated transfers. Everything is stepped on one thread,
// in one order, so a seed gives the same run bit for bit.

#include <cstdint>

#include "scheduler/common/result.h"
#include "simulator/run_outcome.h"
#include "simulator/scenario.h"

namespace orch::sim {

Result<RunOutcome> run_orchestrate(const Scenario& scenario, std::uint64_t seed);

}  // namespace orch::sim
