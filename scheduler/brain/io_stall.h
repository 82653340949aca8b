#pragma once
// I/O stalls (issue 43, docs/health.md "I/O stalls"): a checkpoint save that runs far longer than
// the job's saves usually take. The agent times each save from the job's checkpoint_start line
// to its checkpoint line and raises io_stall past its bound; the launch gives it the bound from
// the job's own history (io_stall_after_s), and the brain turns the site's alerts into one job
// event `io-stall` per save (a notice a webhook may ask for) and a row the scorecard counts per
// cluster (storage health).

#include <string>
#include <vector>

#include "scheduler/brain/brain_core.h"
#include "scheduler/model/site_types.h"
#include "scheduler/spec/job_spec.h"
#include "scheduler/store/rows.h"

namespace orch {

// Saves the job must have reported (checkpoint lines with save_time_s) before the launch gives
// the agent a bound.
constexpr std::size_t kIoStallMinSaves = 3;

// LaunchRequest::io_stall_after_s: checkpoint.stall_factor x the median of the reported save
// times, at least checkpoint.stall_min_s; 0 (no bound from the launch) when stall_factor is 0 or
// fewer than kIoStallMinSaves saves were reported. Pure.
double io_stall_after_s(const CheckpointSpec& spec, std::vector<double> save_times_s);

// The event's words: "io stall on alpha-n3 (task 2): the save of step 40 to /ckpt/... has run
// 130 s (bound 100 s) on nfs4 /ckpt" (the alert's detail, task_alert.h).
std::string io_stall_message(const TaskAlert& alert);

// Records each io_stall alert of the attempt once per save (attempt, step, path) and raises one
// job event io-stall for each save recorded now; alerts seen on earlier polls raise nothing.
Result<void> raise_io_stalls(BrainCore& core, const AttemptRow& attempt,
                             const std::vector<TaskAlert>& alerts);

}  // namespace orch
