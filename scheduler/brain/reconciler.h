#pragma once
// The brain's reconciling part: one copy of a job at a time. A site that comes back after the
// brain gave up on it (its attempts ended with site_down) may still run, or queue, an attempt
// the brain declared ended. Exactly one attempt may carry a job: decide which from progress
// (the rules are scheduler/lifecycle/duplicates.h), say why in a "reconciled" event, and stop
// the other.

#include "scheduler/brain/brain_core.h"

namespace orch {

class Reconciler : BrainPart {
 public:
  explicit Reconciler(BrainCore& core) : BrainPart(core) {}

  // `stale` ended (the brain gave up on it) but its site still runs it (running) or queues it:
  // keep exactly one copy of the job and stop the other.
  Result<void> reconcile_stale(AttemptRow& stale, bool running, JobRow& job);

 private:
  Result<void> reconcile_duplicate(AttemptRow& stale, bool running, AttemptRow& live, JobRow& job);
  // No other attempt carries the job, which waits to resume: the stale one may take it back.
  Result<void> reconcile_waiting(AttemptRow& stale, bool running, JobRow& job);
  // Makes the stale attempt the job's own again (attempt -> `to`, job -> placed/running).
  Result<void> reinstate(AttemptRow& stale, AttemptState to, JobRow& job, const std::string& why);
  // Keeps the job as it is and stops the stale attempt.
  Result<void> drop_stale(AttemptRow& stale, const std::string& why, const std::string& cancel_why);
};

}  // namespace orch
