#pragma once
// Readers of the provider-owned sections of a cluster entry (named by provider_catalog.cpp),
// and the value rules they share with the rest of the clusters parser.

#include "scheduler/model/launch_limits.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// Durations the adapters turn into milliseconds: positive, at most a year.
inline constexpr yaml::NumberRange kPositiveSeconds{0.0, true, limits::kMaxDurationS};

// slurm: the "slurm" and "ssh" sections (slurm_sections.cpp).
void read_slurm_sections(const yaml::MapView& entry, ClusterSpec& cluster);
// kubernetes: the "kubernetes" section (kubernetes_sections.cpp).
void read_kubernetes_sections(const yaml::MapView& entry, ClusterSpec& cluster);
// local: the "local" section (local_section.cpp).
void read_local_sections(const yaml::MapView& entry, ClusterSpec& cluster);

}  // namespace orch
