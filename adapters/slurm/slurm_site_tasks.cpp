// SlurmSite::judge_tasks: what the tasks' agent records (task_events.h) add to an observation.
// The rules are pure (task_events.cpp); this file acts on them: a silent task's node, or a task's
// GPU fault (issue 43), is recorded in the run directory's node_lost marker and the job
// cancelled, in one command.

#include "adapters/slurm/batch_script.h"
#include "adapters/slurm/observe_command.h"
#include "adapters/slurm/parse_util.h"
#include "adapters/slurm/slurm_site.h"
#include "scheduler/common/text.h"
#include "scheduler/model/workdir.h"

namespace orch {

Result<void> SlurmSite::judge_tasks(const std::string& token,
                                    const std::optional<slurm::JobRecord>& job,
                                    const TaskReading& tasks, RunObservation& obs) {
  const slurm::TaskSnapshot& snapshot = tasks.snapshot;
  // The site ended this attempt for a lost node: that stays its end, whatever Slurm says of the
  // cancel that followed (CANCELLED, or forgotten).
  if (snapshot.marker) {
    obs.phase = RunPhase::exited;
    obs.exit = slurm::marker_status(*snapshot.marker);
    return Ok{};
  }
  // Its setup failed (issue 40): the user's cause, with the setup's last lines.
  if (snapshot.setup_failed && obs.phase == RunPhase::exited) {
    ExitStatus s = setup_failed_exit(*snapshot.setup_failed);
    if (obs.exit) s.failed_node = obs.exit->failed_node;
    obs.exit = s;
    return Ok{};
  }
  if (!job) return Ok{};
  // A save stalled past its bound (issue 43): raised while it lasts; the brain counts it once.
  if (obs.phase != RunPhase::exited) obs.alerts = slurm::task_alerts(snapshot, job->nodes);
  const std::string_view state = slurm::detail::base_state(job->state);
  // A GPU fault the live watch saw (issue 43): the attempt ends with it, whatever came after.
  if (auto fault = slurm::faulted_task(snapshot, job->nodes)) {
    if (obs.phase == RunPhase::exited) {
      // A job that finished before the poll saw its fault finished: it is not run again.
      const bool succeeded = obs.exit && obs.exit->exit_code == 0 && !obs.exit->signal;
      if (!succeeded) obs.exit = slurm::marker_status(*fault);
      return Ok{};
    }
    if (state != "RUNNING") return Ok{};
    auto ended = end_for_lost_node(token, *fault);
    if (!ended) return ended.error();
    if (*ended) {
      obs.phase = RunPhase::exited;
      obs.exit = slurm::marker_status(*fault);
    }
    return Ok{};
  }
  if (obs.phase == RunPhase::exited && obs.exit && obs.exit->failed_node.empty()) {
    obs.exit->failed_node = slurm::failed_node_after_end(snapshot, state, job->nodes);
    return Ok{};
  }
  if (state != "RUNNING" || !tasks.now_ms) return Ok{};
  auto lost = slurm::silent_task(snapshot, *tasks.now_ms, job->nodes);
  if (!lost) return Ok{};
  auto ended = end_for_lost_node(token, *lost);
  if (!ended) return ended.error();
  if (*ended) {
    obs.phase = RunPhase::exited;
    obs.exit = slurm::node_lost_status(*lost);
  }
  return Ok{};
}

Result<bool> SlurmSite::end_for_lost_node(const std::string& token,
                                          const slurm::NodeLostMarker& lost) {
  auto command = slurm::node_lost_command(slurm::run_paths(spec_.storage_root, token), token, lost);
  if (!command) return command.error();
  auto r = run_line("scancel", *command, /*allow_failure=*/true);
  if (!r) {
    if (r.error().kind == ErrorKind::unreachable) return r.error();
    return false;
  }
  // Until the cancel went through the job still runs: the next poll judges it again (a second
  // marker only rewrites the first).
  return r->exit_status == 0;
}

}  // namespace orch
