#pragma once
// What happens to a job after an attempt ends: done, resume (after a backoff), or give up.
// Infrastructure causes spend the infra budget and user causes the user budget, so a flaky
// provider never eats the retries a user set aside for their own bugs.

#include <string>

#include "scheduler/common/clock.h"
#include "scheduler/model/job_state.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

// Delay before restart number n (1-based): initial * multiplier^(n-1), capped at max.
Millis backoff_ms(const BackoffSpec& backoff, int restart_no);

struct AfterExit {
  enum class Verdict { succeed, resume, fail, ignore } verdict = Verdict::ignore;
  bool spends_infra = false;  // resume: which budget it spends
  Millis delay_ms = 0;        // resume: backoff
  std::string reason;         // for people
};

AfterExit decide_after_exit(const RestartPolicy& policy, int infra_restarts, int user_restarts,
                            ExitCause cause);

}  // namespace orch
