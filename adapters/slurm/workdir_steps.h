#pragma once
// The batch script's part for a job's code and setup (issue 40; scheduler/model/workdir.h).
// Pure. After the exports and before the tasks' step, job.sh
//   - exports the snippets' variables (workdir_env; the failure marker is
//     <run dir>/setup_failed, which the observer reads),
//   - extracts the code on the batch host (code_extract_snippet: once per hash, atomically, on
//     the shared filesystem), exiting 1 when it cannot,
//   - runs the setup as its own step: srun --nodes=1 --ntasks=1 (setup_per_node: one task on
//     every node) /bin/sh -c <setup_snippet>, under its lock and cached by its done marker;
//     a failed setup ends the script with the step's status (kSetupFailedExit) and leaves the
//     marker,
//   - unsets ORCH_SETUP_COMMAND, so the tasks do not carry it.
// The tasks' step then starts in the tree: srun --chdir=<workdir> (srun_chdir_option).

#include <string>

#include "adapters/slurm/container_words.h"
#include "scheduler/common/result.h"
#include "scheduler/model/site_types.h"

namespace orch::slurm {

// The lines above, each value through shell_quote; "" when the launch has neither code nor
// setup. ErrorKind::invalid when a value cannot be quoted (a NUL byte).
// With a container (container_words.h) the setup step runs in the job's image too.
Result<std::string> workdir_script_lines(const LaunchRequest& r, const std::string& run_dir,
                                         const ContainerWords& image = {});

// " --chdir=<workdir>" (quoted) for the tasks' srun, or "" without code.
Result<std::string> srun_chdir_option(const LaunchRequest& r);

}  // namespace orch::slurm
