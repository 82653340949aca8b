// map_job_state: Slurm's job state (squeue %T, scontrol JobState, sacct State) -> RunPhase and
// ExitStatus. The states are those of job_state_string() in Slurm 22.05 to 26.05.

#include <string>
#include <string_view>

#include "adapters/slurm/parse_util.h"
#include "adapters/slurm/slurm_parse.h"

namespace orch::slurm {
namespace {

using detail::base_state;
using detail::contains;

// SUSPENDED and STOPPED hold their allocation but make no progress; REQUEUE_HOLD, SPECIAL_EXIT
// ("same as REQUEUE_HOLD", Slurm's job_state_codes page) and RESV_DEL_HOLD wait for a release.
constexpr std::string_view kQueued[] = {
    "PENDING",      "CONFIGURING",   "POWER_UP_NODE", "REQUEUED",  "REQUEUE_FED", "REQUEUE_HOLD",
    "SPECIAL_EXIT", "RESV_DEL_HOLD", "RESIZING",      "SUSPENDED", "STOPPED"};
constexpr std::string_view kRunning[] = {"RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING"};

std::string node_words(const std::vector<std::string>& nodes) {
  constexpr std::size_t kMaxNamed = 8;
  std::string out;
  for (std::size_t i = 0; i < nodes.size() && i < kMaxNamed; ++i) {
    if (i > 0) out += ',';
    out += nodes[i];
  }
  if (nodes.size() > kMaxNamed) {
    out += " and " + std::to_string(nodes.size() - kMaxNamed) + " more";
  }
  return out;
}

std::string detail_of(const JobRecord& job, std::string_view state, bool name_nodes) {
  std::string d(state);
  if (!job.cancelled_by.empty()) d += " by " + job.cancelled_by;
  if (!job.reason.empty()) d += " (" + job.reason + ")";
  if (name_nodes && !job.nodes.empty()) d += " on " + node_words(job.nodes);
  return d;
}

// The exit code or signal Slurm recorded, for a state that is not success: a recorded 0:0
// says nothing (a job cancelled while pending never ran), so neither is set.
void set_recorded(const JobRecord& job, ExitStatus& status) {
  if (job.signal && *job.signal > 0) {
    status.signal = job.signal;
  } else if (job.exit_code && *job.exit_code > 0) {
    status.exit_code = job.exit_code;
  }
}

// What Slurm's job reason codes page (slurm.schedmd.com/job_reason_codes.html) says of its
// common reasons; "" for the others, which are shown as Slurm writes them.
std::string_view reason_meaning(std::string_view reason) {
  const auto starts = [&](std::string_view p) { return reason.substr(0, p.size()) == p; };
  if (reason == "Resources")
    return "the resources it asks for are not available, e.g. used by other jobs";
  if (reason == "Priority")
    return "jobs of higher priority come first in its partition or reservation";
  if (reason == "Dependency") return "it depends on a job that has not finished as required";
  if (reason == "BeginTime") return "its earliest start time has not come";
  if (starts("AssocGrp")) return "its association has reached an aggregate limit";
  if (starts("AssocMax")) return "it asks for more than a limit of its association allows";
  if (starts("QOSGrp")) return "its QOS has reached an aggregate limit";
  if (starts("QOSMax")) return "it asks for more than a limit of its QOS allows";
  return "";
}

}  // namespace

JobPhase map_job_state(const JobRecord& job) {
  JobPhase out;
  std::string_view state = base_state(job.state);
  if (contains(kQueued, state)) {
    out.phase = RunPhase::queued;
    if (!job.reason.empty()) {
      std::string_view meaning = reason_meaning(job.reason);
      out.waiting = "Slurm: " + std::string(state) + " (" + job.reason +
                    (meaning.empty() ? "" : ": " + std::string(meaning)) + ")";
    }
    return out;
  }
  if (contains(kRunning, state)) {
    out.phase = RunPhase::running;
    return out;
  }

  ExitStatus status;
  bool name_nodes = false;
  if (state == "COMPLETED") {
    // Slurm: "terminated all processes on all nodes with an exit code of zero".
    status.exit_code = job.exit_code.value_or(0);
  } else if (state == "FAILED") {
    // Slurm 22.05 gives Reason=JobLaunchFailure to every batch script killed by a signal (a
    // SIGKILL from the OOM killer too), so that reason says nothing about the launch. A refused
    // sbatch does leave a FAILED job (Reason=BadConstraints, ExitCode 0:1) under the token.
    set_recorded(job, status);
    if (job.reason == "BadConstraints") status.cause = ExitCause::launch_failed;
  } else if (state == "LAUNCH_FAILED") {
    set_recorded(job, status);
    status.cause = ExitCause::launch_failed;
  } else if (state == "CANCELLED") {
    // Someone outside orchestrate (an admin, the owner by hand); an orchestrate cancel wins
    // over this cause in the classifier.
    set_recorded(job, status);
    status.cause = ExitCause::killed_by_signal;
  } else if (state == "TIMEOUT" || state == "DEADLINE") {
    set_recorded(job, status);
    status.cause = ExitCause::time_limit;
  } else if (state == "PREEMPTED") {
    set_recorded(job, status);
    status.cause = ExitCause::preempted;
  } else if (state == "OUT_OF_MEMORY") {
    set_recorded(job, status);
    status.cause = ExitCause::out_of_memory;
  } else if (state == "NODE_FAIL" || state == "BOOT_FAIL") {
    set_recorded(job, status);
    status.node_lost = true;
    status.cause = ExitCause::node_lost;
    name_nodes = true;
  } else if (state == "REVOKED") {
    // Federation: a sibling cluster runs the job; nothing ran here and nothing was recorded.
  } else {
    // A state this code does not know (a newer Slurm). Saying "running" is the safe guess: the
    // brain keeps watching and launches nothing twice; the next poll that shows a known state
    // (or the job gone) settles it.
    out.phase = RunPhase::running;
    out.note = "unknown Slurm job state '" + job.state + "' taken as running";
    return out;
  }
  status.detail = detail_of(job, state, name_nodes);
  out.phase = RunPhase::exited;
  out.exit = std::move(status);
  return out;
}

}  // namespace orch::slurm
