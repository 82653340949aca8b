#pragma once
// Figures about a job's whole life, computed from its attempts: steps lost to failures,
// MFU over all attempts, and the effective training time ratio (ETTR).
//   ETTR = productive time / wall-clock time, where productive time is the step time of steps
//   that were kept (not re-done after a resume), and wall-clock runs from the first attempt's
//   start to the last one's end (or now).

#include <optional>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/store/rows.h"

namespace orch {

struct JobStats {
  std::int64_t steps_lost = 0;
  std::optional<double> ettr;
  std::optional<double> productive_s;
  std::optional<double> wall_s;
};

// Steps the next attempt re-does: what the previous one reached past the checkpoint it resumes.
std::int64_t steps_lost_between(const AttemptRow& previous,
                                std::optional<std::int64_t> resume_step);

JobStats compute_job_stats(const std::vector<AttemptRow>& attempts, Millis now);

// The job's measured wall time per step, what redoing a step costs: of its newest attempt that
// made progress over more than one step, the time from its first running to its last progress
// line over the steps it made (start-up included, so a redo is not underestimated). nullopt
// before any such attempt.
std::optional<double> measured_step_s(const std::vector<AttemptRow>& attempts);

}  // namespace orch
