#pragma once
// A cluster's `burn_in.fabric:` map (issue 43; docs/clusters.md): {all_reduce_perf: PATH,
// rounds: 0, min_busbw_ratio: 0.6, bytes: 1073741824, timeout_s: 120, gpus_per_node: 0}. Checked
// as the rest of the clusters file is (file:line:col); absent keys keep FabricSpec's defaults.

#include "scheduler/model/fabric_step.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// burn_in: the cluster's `burn_in` map.
void read_burn_in_fabric(const yaml::MapView& burn_in, FabricSpec& out);

}  // namespace orch
