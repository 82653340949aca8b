#pragma once
// A live attempt that preemption for priority may stop (issue 18): the store lists them
// (Store::preemption_candidates) and placement chooses among them (placement/preemption.h).
// What it made of each is a PreemptionNote.

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
  std::string job_name;  // its job's, for the explanation (PreemptionNote)
};

// One preemption a placement decision considered (issue 42): a live attempt on a cluster, whether
// it was taken, and why or why not ("team vision within its quota 4/4, protected"). The placer
// keeps them with the job's verdicts; `orchestrate job explain` lists them per cluster.
struct PreemptionNote {
  PreemptionCandidate victim;
  bool taken = false;
  std::string why;
};

}  // namespace orch
