#pragma once
// The clusters file's scheduling sections (docs/config.md): `priority_classes:`, a map of class
// names to integer priorities, and `teams:`, each team's GPU quota; checked as the rest of the
// file is (file:line:col).

#include <optional>
#include <string>
#include <vector>

#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/job_spec.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// `priority_classes:` and `teams:`; a team's per-cluster quota must name one of `clusters`.
void read_scheduling(const yaml::MapView& file, const std::vector<ClusterSpec>& clusters,
                     SchedulingSpec& out);

// The priority a job spec's `priority:` text names: an integer, or a class of `spec`. nullopt
// when it is neither; `why` then says what is known.
std::optional<int> resolve_priority(const SchedulingSpec& spec, const std::string& name,
                                    std::string& why);

}  // namespace orch
