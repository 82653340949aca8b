#pragma once
// The recovery between two attempts of a job, from their rows: the times that
// health/recovery_breakdown.h splits into detection, backoff, placing, site and startup. One
// place reads them off the rows, for the REST API, the simulator's report and the tests.

#include <optional>

#include "scheduler/health/recovery_breakdown.h"
#include "scheduler/store/rows.h"

namespace orch {

// From `prev`'s last sign of life to `next`'s first progress line; nullopt when `prev` has not
// ended or ended by succeeding (nothing to recover from).
std::optional<RecoveryBreakdown> recovery_between(const AttemptRow& prev, const AttemptRow& next);

}  // namespace orch
