#pragma once
// A live attempt that preemption for priority may stop (issue 18): the store lists them
// (Store::preemption_candidates) and placement chooses among them (placement/preemption.h).

#include <cstdint>
#include <string>

namespace orch {

struct PreemptionCandidate {
  std::int64_t attempt = 0;  // AttemptId
  std::int64_t job = 0;      // JobId
  std::string cluster;
  int gpus = 0;
  int priority = 0;
  std::int64_t steps_at_risk = 0;  // steps since its job's last checkpoint (redone on resume)
  std::string team;                // its job's team ("" for none)
  // Team quotas: it runs on borrowed GPUs that a team within its quota takes back, whatever its
  // priority, before any other victim (placement/preemption.h, preemptible_by).
  bool reclaim = false;
};

}  // namespace orch
