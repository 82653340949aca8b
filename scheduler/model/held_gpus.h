#pragma once
// Backfill (issue 18, docs/scheduling.md): the GPUs a cluster keeps for the first waiting job
// that fits nowhere yet, and what placement knows of when each live attempt will end. The placer
// decides the hold (scheduler/placement/backfill.h); the store lists the attempts' ends.

#include <cstdint>
#include <optional>
#include <string>

#include "scheduler/common/clock.h"

namespace orch {

struct HeldGpus {
  std::int64_t job = 0;  // JobId: the job they are held for
  int priority = 0;      // its priority: a job of higher priority passes the hold
  int gpus = 0;          // what it needs
  // When it is expected to start there: when enough attempts will have ended by their jobs'
  // time limits. nullopt: unknown, since an attempt without a time limit must end first.
  std::optional<Millis> starts_ms;
  // GPUs free at starts_ms beyond what it needs: a job that fits in them may start now whatever
  // its time limit, since the held job still starts on time.
  int spare_gpus = 0;
};

// A live attempt as backfill sees it: where it holds how many GPUs, and when it ends at the
// latest (placed + its job's time_limit); nullopt: no time limit, or it is ending already.
struct AttemptEnd {
  std::string cluster;
  int gpus = 0;
  std::optional<Millis> ends_ms;
};

}  // namespace orch
