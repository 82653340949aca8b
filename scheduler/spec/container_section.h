#pragma once
// A job file's `container:` (issue 40, item 4; docs/config.md "container"):
//
//   container:
//     image: nvcr.io#nvidia/pytorch:24.05-py3   # pyxis; apptainer: docker://... or a .sif
//     mounts: ["/data:/data:ro", "/scratch:/scratch"]
//     workdir: /workspace                       # inside; default: ORCH_WORKDIR (mounted)
//     env: [HF_TOKEN, WANDB_API_KEY]             # the job's values win over the image's
//
// The clusters that run it are those that declare a runtime (`slurm.containers`,
// `local.containers`) and Kubernetes (the pod's image; mounts there are refused: use its
// `kubernetes.volumes`). Every value is checked here (scheduler/model/container.h).

#include <vector>

#include "scheduler/model/container.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// Reads `container` from the job map into `out`, recording the first bad value.
void read_container(yaml::MapView& job, ContainerSpec& out);

// A cluster's `containers:` (slurm: none, pyxis, apptainer; local: none, apptainer).
void read_container_runtime(yaml::MapView& section, ContainerRuntime& out,
                            const std::vector<ContainerRuntime>& allowed);

}  // namespace orch
