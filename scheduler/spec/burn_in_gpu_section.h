#pragma once
// A cluster's `burn_in.gpu:` map (issue 43; docs/clusters.md): {nvidia_smi: PATH|none,
// dcgm_level: 0..3, dcgmi: PATH, torch_python: PATH, torch_s: S, min_tflops_ratio: R,
// min_datasheet_ratio: R}. Checked as the rest of the clusters file is (file:line:col); absent
// keys keep the defaults of GpuBurnInSpec.

#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// burn_in: the cluster's burn_in map.
void read_burn_in_gpu(const yaml::MapView& burn_in, GpuBurnInSpec& out);

}  // namespace orch
