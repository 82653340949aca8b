#pragma once
// A job's ended attempts as the restart policy reads them (restart_policy.h): each one's cause and
// whether it made progress. An attempt made progress when the job's next attempt resumed from a
// newer checkpoint than it did (for the attempt that just ended: when the job's newest
// checkpoint is its own and newer than the one it resumed from), or when it ran at least
// healthy_after_s.

#include <optional>
#include <vector>

#include "scheduler/lifecycle/restart_policy.h"
#include "scheduler/store/rows.h"

namespace orch {

// attempts: the job's, by number (all ended); latest: the job's newest checkpoint, if any.
std::vector<EndedAttempt> restart_history(const std::vector<AttemptRow>& attempts,
                                          const std::optional<CheckpointRow>& latest,
                                          double healthy_after_s, Millis now);

}  // namespace orch
