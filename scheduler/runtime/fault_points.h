#pragma once
// Named places where a test can make the server die on purpose, to prove crash safety at the
// worst moments (e.g. after sbatch accepted a job and before the brain recorded its id).
// Enabled only by the environment variable ORCH_FAULTS, a comma-separated list of names:
//
//   ORCH_FAULTS=kill-after-launch orchestrate serve ...
//
// A point that is enabled kills the whole process with SIGKILL (no destructors, no flush, like
// a power cut). Without ORCH_FAULTS, fault_point() is one relaxed atomic load.
//
// Points: kill-after-launch (site worker: the provider accepted a launch; its result has not
// reached the brain).

#include <string_view>

namespace orch {

void fault_point(std::string_view name);

}  // namespace orch
