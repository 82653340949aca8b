#include "scheduler/lifecycle/duplicates.h"

namespace orch {

std::optional<std::int64_t> attempt_progress(const AttemptRow& attempt) {
  if (attempt.last_step) return attempt.last_step;
  return attempt.resumed_from_step;
}

DuplicateVerdict decide_duplicate(const AttemptRow& stale, bool stale_running,
                                  const AttemptRow& live) {
  DuplicateVerdict v;
  v.stale_progress = attempt_progress(stale);
  v.live_progress = attempt_progress(live);
  v.keep_stale =
      stale_running && v.stale_progress && *v.stale_progress > v.live_progress.value_or(0);
  return v;
}

}  // namespace orch
