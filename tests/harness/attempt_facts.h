#pragma once
// An attempt as the scorecard and placement's cluster histories read it
// (scheduler/health/scorecard.h), in one call: the tests of both build their windows from it.

#include <cstdint>
#include <optional>
#include <string>

#include "scheduler/health/scorecard.h"

namespace orch::testing {

inline AttemptFact attempt_fact(std::string cluster, std::int64_t job, int no, int gpus, int nodes,
                                Millis started, std::optional<Millis> ended, ExitCause cause,
                                std::optional<double> mfu = std::nullopt,
                                std::optional<Millis> running = std::nullopt) {
  AttemptFact a;
  a.cluster = std::move(cluster);
  a.job_id = job;
  a.no = no;
  a.gpus = gpus;
  a.nodes = nodes;
  a.started_ms = started;
  a.running_ms = running;
  a.ended_ms = ended;
  a.cause = cause;
  a.mfu = mfu;
  return a;
}

}  // namespace orch::testing
