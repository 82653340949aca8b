// The recovery between two attempts, from their rows (attempt_recovery.h).
#include "scheduler/lifecycle/attempt_recovery.h"

namespace orch {

std::optional<RecoveryBreakdown> recovery_between(const AttemptRow& prev, const AttemptRow& next) {
  if (!prev.ended_ms || prev.cause == ExitCause::succeeded) return std::nullopt;
  return recovery_breakdown({prev.last_alive_ms, *prev.ended_ms, next.due_ms, next.started_ms,
                             next.running_ms, next.first_progress_ms});
}

}  // namespace orch
