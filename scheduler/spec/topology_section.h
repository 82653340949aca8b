#pragma once
// A job file's `topology:` section (scheduler/model/topology_hint.h, docs/job-spec.md):
//
//   topology: {level: cloud.provider.com/topology-block, required: true, switches: 1,
//              switches_wait_s: 600}

#include "scheduler/model/topology_hint.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// Reads `topology:` of `job` into `out` when present, recording the first bad value in the
// reader: a level that is not a node label key, switches below 1, switches_wait_s without
// switches, required without a level, or a section that says nothing.
void read_topology(const yaml::MapView& job, TopologyHint& out);

}  // namespace orch
