#pragma once
// What happens to a job after an attempt ends: done, resume (after a backoff), or give up.
// Infrastructure causes spend the infra budget and user causes the user budget, so a flaky
// provider never eats the retries a user set aside for their own bugs.
//
// Both the infra budget and the backoff count failures in a row without progress (issue 38):
// an attempt that saved a checkpoint newer than the one it resumed from, or ran the spec's
// healthy_after_s, starts the count again. A run of weeks survives hundreds of node failures
// that each came after progress, each resumed at once; the backoff starts only with the second
// infra failure in a row without progress and grows while failures follow each other with
// nothing gained between them. A user failure (the job's own code) waits from the first.

#include <string>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/model/job_state.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

// Delay before restart number n (1-based): initial * multiplier^(n-1), capped at max.
Millis backoff_ms(const BackoffSpec& backoff, int restart_no);

// An ended attempt as the policy sees it, oldest first.
struct EndedAttempt {
  ExitCause cause = ExitCause::none;
  bool made_progress = false;  // a newer checkpoint, or healthy_after_s of running
};

// The failures of `cause`'s kind (infra or user) in a row at the end of `history` (whose last
// entry is the attempt that just ended), counting back until an attempt that made progress or
// failed of the other kind; an ending that spends nothing (cancel, preemption, a queue move) is
// passed over. The last attempt counts itself: 1 when it made progress.
int failure_streak(const std::vector<EndedAttempt>& history);

struct AfterExit {
  enum class Verdict { succeed, resume, fail, ignore } verdict = Verdict::ignore;
  bool spends_infra = false;  // resume: which budget it spends
  Millis delay_ms = 0;        // resume: backoff
  std::string reason;         // for people
};

// streak: failure_streak of the history that ends with this attempt. user_restarts: the user
// restarts the job spent in all (the user budget counts every one).
AfterExit decide_after_exit(const RestartPolicy& policy, int streak, int user_restarts,
                            ExitCause cause);

}  // namespace orch
