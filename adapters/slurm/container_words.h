#pragma once
// The batch script's words for a job's `container:` (issue 40, item 4; scheduler/model/
// container.h), as the cluster declares (`slurm.containers`). Pure.
//   pyxis:     srun options, on the tasks' step and the setup step: --container-image,
//              --container-mounts (the agent's directory, the storage root and the checkpoint
//              root at the same paths, then the job's mounts), --container-workdir (the
//              job's, else its code tree, else its run directory), --container-env. Every task,
//              the agent included, runs in the image.
//   apptainer: the words before the job's shell (and the setup's): apptainer exec --nv --bind
//              ... --pwd ... IMAGE. The agent runs on the node; the job in the image.
// Nothing for a launch without a container; ErrorKind::invalid for one the cluster cannot run
// (placement keeps such jobs off it: a launch that gets here anyway is refused, not run bare).

#include <string>

#include "scheduler/common/result.h"
#include "scheduler/model/site_types.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch::slurm {

struct ContainerWords {
  std::string srun_options;  // " 'opt' 'opt'...", quoted, for srun (pyxis)
  std::string exec_prefix;   // " 'apptainer' 'exec' ... 'IMAGE'", quoted, before the shell
};

Result<ContainerWords> container_words(const LaunchRequest& r, const ClusterSpec& cluster,
                                       const std::string& agent, const std::string& run_work_dir);

}  // namespace orch::slurm
