#pragma once
// The job and attempt state machines. A transition not listed in can_transition() is
// illegal: the store refuses it and logs an event instead of applying it.
//
// Job:      pending -> placed -> running -> succeeded | failed | cancelled
//                         \         \-> resuming -> placed (next attempt) | failed | cancelled
//                          \-> resuming (launch failed) | succeeded (finished before observed)
//                          \-> pending (the launch met the server's own misconfiguration)
// Attempt:  launching -> running -> exited(cause)
//                    \-> exited(cause)   (launch failed, or it ran and ended between polls)
//           exited(site_down) -> running | launching   (reinstate only, see can_reinstate)

#include <optional>
#include <string>
#include <string_view>

namespace orch {

// staging: placed on a cluster in thought, waiting there for its datasets or newest checkpoint to
// be copied and verified (issue 5) before it is launched.
enum class JobState { pending, placed, running, resuming, succeeded, failed, cancelled, staging };
enum class AttemptState { launching, running, exited };

// Why an attempt ended. Infra causes spend the infra budget, user causes the user budget.
enum class ExitCause {
  none,                // still live
  succeeded,           // exit code 0
  user_error,          // non-zero exit code from the job's own code
  killed_by_signal,    // a signal nobody in orchestrate sent (OOM killer, node reboot, admin)
  site_down,           // the site stopped answering for longer than its grace
  node_lost,           // the provider reports the node gone
  launch_failed,       // the site refused or failed the launch
  lost,                // the site no longer knows the attempt and left no exit record
  preempted,           // the provider took the nodes back for someone else (Slurm PREEMPTED)
  time_limit,          // the provider's time limit ended it (Slurm TIMEOUT): resume, no blame
  out_of_memory,       // the provider's memory limit killed it (Slurm OUT_OF_MEMORY): the job's
                       // own doing, it spends the user budget
  gpu_error,           // the job's log shows a GPU fault (Xid, uncorrectable ECC): the node's
  network_error,       // the job's log shows the network failed (NCCL watchdog, connection reset)
  io_error,            // the job's log shows storage failed (disk full, checkpoint write timeout)
  hang,                // no progress for the job's hang_after: orchestrate stopped it
  gang_timeout,        // not every task of the gang ran within the site's gang timeout
  straggler,           // a node confirmed slowest by per-rank step times: orchestrate stopped the
                       // attempt to run again without it
  queue_timeout,       // still queued at its site past the job's max_queue_s while another
                       // cluster could run it: moved there (no restart spent, no blame)
  priority_preempted,  // orchestrate stopped it to make room for a job of higher priority
                       // (docs/scheduling.md): no restart spent, no blame on the cluster
  quota_reclaimed,     // it ran on GPUs borrowed beyond its team's quota, and orchestrate took
                       // them back for a team within its own: no restart spent, no blame
  setup_failed,        // the job's `setup:` failed before any task ran (issue 40): the user's
                       // cause, its last lines in the reason; never an infra restart
  site_misconfigured,  // the launch failed on the server's own configuration of the site (its
                       // key file, credentials, storage root): no restart spent, the job waits
                       // in pending until the cluster's preflight passes (docs/health.md)
  gpu_xid,             // the agent's live watch saw a fatal Xid in the node's kernel log while
                       // the job ran (issue 43): the site ended the attempt at once, naming the
                       // node and GPU; the node is left out of the next attempt
  gpu_ecc,             // the live watch saw a GPU's uncorrectable ECC count rise: as gpu_xid
  cancelled,           // orchestrate cancelled it (user request, or duplicate reconciliation)
};

bool is_terminal(JobState s);
// Waiting for placement: pending, resuming or staging.
bool is_waiting(JobState s);
bool can_transition(JobState from, JobState to);
bool can_transition(AttemptState from, AttemptState to);
// The one way back from exited: an attempt the brain ended because its site fell silent
// (cause site_down) that the site, once back, still runs (to running) or still queues (to
// launching) is reinstated when it is the job's best copy. Nothing else leaves exited.
bool can_reinstate(AttemptState from, ExitCause cause, AttemptState to);
bool is_infra_cause(ExitCause c);

std::string_view to_string(JobState s);
std::string_view to_string(AttemptState s);
std::string_view to_string(ExitCause c);
std::optional<JobState> parse_job_state(std::string_view s);
std::optional<AttemptState> parse_attempt_state(std::string_view s);
std::optional<ExitCause> parse_exit_cause(std::string_view s);

inline constexpr JobState kAllJobStates[] = {
    JobState::pending,   JobState::placed, JobState::running,   JobState::resuming,
    JobState::succeeded, JobState::failed, JobState::cancelled, JobState::staging};
inline constexpr AttemptState kAllAttemptStates[] = {AttemptState::launching, AttemptState::running,
                                                     AttemptState::exited};

}  // namespace orch
