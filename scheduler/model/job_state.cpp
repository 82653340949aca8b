#include "scheduler/model/job_state.h"

namespace orch {

bool is_terminal(JobState s) {
  return s == JobState::succeeded || s == JobState::failed || s == JobState::cancelled;
}

bool is_waiting(JobState s) {
  return s == JobState::pending || s == JobState::resuming || s == JobState::staging;
}

bool can_transition(JobState from, JobState to) {
  using S = JobState;
  switch (from) {
    case S::pending:
      return to == S::placed || to == S::staging || to == S::cancelled || to == S::failed;
    case S::staging:
      return to == S::placed || to == S::pending || to == S::cancelled || to == S::failed;
    case S::placed:
      return to == S::running || to == S::resuming || to == S::succeeded || to == S::failed ||
             to == S::cancelled || to == S::pending;
    case S::running:
      return to == S::resuming || to == S::succeeded || to == S::failed || to == S::cancelled;
    case S::resuming:
      return to == S::placed || to == S::staging || to == S::failed || to == S::cancelled;
    case S::succeeded:
    case S::failed:
    case S::cancelled:
      return false;
  }
  return false;
}

bool can_transition(AttemptState from, AttemptState to) {
  switch (from) {
    case AttemptState::launching:
      return to == AttemptState::running || to == AttemptState::exited;
    case AttemptState::running:
      return to == AttemptState::exited;
    case AttemptState::exited:
      return false;
  }
  return false;
}

bool can_reinstate(AttemptState from, ExitCause cause, AttemptState to) {
  return from == AttemptState::exited && cause == ExitCause::site_down &&
         (to == AttemptState::running || to == AttemptState::launching);
}

bool is_infra_cause(ExitCause c) {
  switch (c) {
    case ExitCause::killed_by_signal:
    case ExitCause::site_down:
    case ExitCause::node_lost:
    case ExitCause::launch_failed:
    case ExitCause::lost:
    case ExitCause::preempted:
    case ExitCause::time_limit:
    case ExitCause::gpu_error:
    case ExitCause::gpu_xid:
    case ExitCause::gpu_ecc:
    case ExitCause::network_error:
    case ExitCause::io_error:
    case ExitCause::hang:
    case ExitCause::gang_timeout:
    case ExitCause::straggler:
      return true;
    default:
      return false;
  }
}

std::string_view to_string(JobState s) {
  switch (s) {
    case JobState::pending:
      return "pending";
    case JobState::placed:
      return "placed";
    case JobState::running:
      return "running";
    case JobState::resuming:
      return "resuming";
    case JobState::succeeded:
      return "succeeded";
    case JobState::failed:
      return "failed";
    case JobState::cancelled:
      return "cancelled";
    case JobState::staging:
      return "staging";
  }
  return "?";
}

std::string_view to_string(AttemptState s) {
  switch (s) {
    case AttemptState::launching:
      return "launching";
    case AttemptState::running:
      return "running";
    case AttemptState::exited:
      return "exited";
  }
  return "?";
}

std::string_view to_string(ExitCause c) {
  switch (c) {
    case ExitCause::none:
      return "none";
    case ExitCause::succeeded:
      return "succeeded";
    case ExitCause::user_error:
      return "user_error";
    case ExitCause::killed_by_signal:
      return "killed_by_signal";
    case ExitCause::site_down:
      return "site_down";
    case ExitCause::node_lost:
      return "node_lost";
    case ExitCause::launch_failed:
      return "launch_failed";
    case ExitCause::lost:
      return "lost";
    case ExitCause::preempted:
      return "preempted";
    case ExitCause::time_limit:
      return "time_limit";
    case ExitCause::out_of_memory:
      return "out_of_memory";
    case ExitCause::gpu_error:
      return "gpu_error";
    case ExitCause::network_error:
      return "network_error";
    case ExitCause::io_error:
      return "io_error";
    case ExitCause::hang:
      return "hang";
    case ExitCause::gang_timeout:
      return "gang_timeout";
    case ExitCause::straggler:
      return "straggler";
    case ExitCause::queue_timeout:
      return "queue_timeout";
    case ExitCause::priority_preempted:
      return "priority_preempted";
    case ExitCause::quota_reclaimed:
      return "quota_reclaimed";
    case ExitCause::site_misconfigured:
      return "site_misconfigured";
    case ExitCause::setup_failed:
      return "setup_failed";
    case ExitCause::gpu_xid:
      return "gpu_xid";
    case ExitCause::gpu_ecc:
      return "gpu_ecc";
    case ExitCause::cancelled:
      return "cancelled";
  }
  return "?";
}

std::optional<JobState> parse_job_state(std::string_view s) {
  for (JobState v : kAllJobStates) {
    if (to_string(v) == s) return v;
  }
  return std::nullopt;
}

std::optional<AttemptState> parse_attempt_state(std::string_view s) {
  for (AttemptState v : kAllAttemptStates) {
    if (to_string(v) == s) return v;
  }
  return std::nullopt;
}

std::optional<ExitCause> parse_exit_cause(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(ExitCause::cancelled); ++i) {
    auto c = static_cast<ExitCause>(i);
    if (to_string(c) == s) return c;
  }
  return std::nullopt;
}

}  // namespace orch
