#pragma once
// Rows the store tests insert: a job of the toy spec, and a job's first attempt.
#include <string>

#include "scheduler/store/rows.h"
#include "tests/harness/builders.h"

namespace orch::testing {

// A job of the toy spec, created (and updated) at `now`, not stored yet.
inline JobRow new_job_row(Millis now = 1000) {
  JobRow j;
  j.name = "toy";
  j.spec = make_job();
  j.created_ms = j.updated_ms = now;
  return j;
}

// The job's first attempt, not stored yet.
inline AttemptRow first_attempt_row(JobId job, const std::string& token,
                                    const std::string& cluster = "alpha", int gpus = 1) {
  AttemptRow a;
  a.job_id = job;
  a.no = 1;
  a.cluster = cluster;
  a.token = token;
  a.gpus = gpus;
  return a;
}

}  // namespace orch::testing
