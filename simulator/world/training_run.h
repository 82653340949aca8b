#pragma once
// How a simulated training attempt advances (issue 19): a step takes step_s; after every step
// that is a multiple of checkpoint_every (the steps are the job's own, so a resumed attempt keeps
// the same checkpoints) a save blocks training for save_s. The attempt ends when it reaches the
// job's last step, or when one of its nodes fails: then it keeps the steps it made, and a save
// the failure interrupted does not count. A run started from a checkpoint's step starts there.
//
// Pure arithmetic over times in seconds: the world asks it how far an attempt got by a time, and
// what it left when it failed.

#include <cstdint>
#include <limits>

#include "scheduler/common/result.h"

namespace orch::sim {

struct TrainingShape {
  double step_s = 0;                  // seconds per step (> 0)
  std::int64_t total_steps = 0;       // the job's length (> 0)
  std::int64_t checkpoint_every = 0;  // steps between saves; 0: the job never saves
  double save_s = 0;                  // seconds a save blocks training (>= 0)

  // Invalid, saying what, when a number cannot be trained with.
  Result<void> check() const;
};

struct TrainingProgress {
  std::int64_t step = 0;             // the steps done
  std::int64_t last_checkpoint = 0;  // the newest save completed (the start step when none)
  std::int64_t saves = 0;            // saves completed in this run
  double at_s = 0;                   // when the run stopped: `until`, or when it completed
  bool completed = false;            // it reached total_steps
};

// Seconds per step of a gang training synchronously: the step's FLOPs over the gang's GPUs at
// their peak times the cluster's MFU, slowed by its slowest node (speed 1 is nominal; a node at
// 0.5 makes every step of the gang take twice as long, since each step waits for every rank).
// Invalid, saying what, for a number that is not positive (an MFU or speed above 1 is refused:
// nothing runs faster than its peak).
Result<double> gang_step_s(double flops_per_step, int gpus, double peak_flops_per_gpu, double mfu,
                           double slowest_node_speed = 1);

// A run that started at start_s from start_step (a checkpoint's step, or 0), as it stands at
// until_s: the time its first node failure ends it, or any time the world asks about while it
// runs (+infinity: until it completes). shape must pass check().
TrainingProgress advance(const TrainingShape& shape, std::int64_t start_step, double start_s,
                         double until_s = std::numeric_limits<double>::infinity());

}  // namespace orch::sim
