#pragma once
// Two copies of one job: a site the brain gave up on (its attempt ended with site_down) comes
// back still running the attempt, while the job already carries on in another one. Exactly one
// may run; this says which, from progress alone.
//   progress = the attempt's last reported step; before it reports one, the step of the
//   checkpoint it resumed from (it starts there); unknown when it has neither.
// The stale copy is kept only when it is running at its site, its progress is known, and it is
// strictly further than the live copy, whose unknown progress counts as none (it has reported
// no step and started from the beginning). Ties, and a stale copy of unknown progress, keep the
// live copy. A stale copy only queued at its site is never kept over a live one: it runs
// nothing, and when it starts it resumes from the checkpoint it was launched with, which is
// never newer than the one the live copy resumed from.

#include <cstdint>
#include <optional>

#include "scheduler/store/rows.h"

namespace orch {

std::optional<std::int64_t> attempt_progress(const AttemptRow& attempt);

struct DuplicateVerdict {
  bool keep_stale = false;
  std::optional<std::int64_t> stale_progress;
  std::optional<std::int64_t> live_progress;
};

DuplicateVerdict decide_duplicate(const AttemptRow& stale, bool stale_running,
                                  const AttemptRow& live);

}  // namespace orch
