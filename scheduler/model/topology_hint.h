#pragma once
// A job's `topology:` hint (issue 44): keep the gang's nodes close in the network. Each provider
// reads the part it understands, the others ignore it:
//
//   Kubernetes with Kueue's topology-aware scheduling: `level` is a node label key naming a
//   level of the topology (cloud.provider.com/topology-block), written on the pod template as
//   kueue.x-k8s.io/podset-required-topology (required) or podset-preferred-topology;
//   Slurm with a tree topology: `switches` is sbatch --switches=<count>[@<max-time>], at most
//   that many leaf switches, waiting up to `switches_wait_s` for them (Slurm's own cap,
//   max_switch_wait, 300 s by default, still applies), then placed anyway.

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "scheduler/common/result.h"

namespace orch {

struct TopologyHint {
  std::string level;        // a node label key; "" when the hint says nothing to Kueue
  bool required = false;    // Kueue: the whole gang in one domain of `level`, or wait
  int switches = 0;         // Slurm: at most this many leaf switches; 0 says nothing to Slurm
  int switches_wait_s = 0;  // Slurm: how long to wait for them; 0 = Slurm's default
  bool empty() const { return level.empty() && switches == 0; }
  bool operator==(const TopologyHint&) const = default;
};

inline constexpr const char* kKueueRequiredTopology = "kueue.x-k8s.io/podset-required-topology";
inline constexpr const char* kKueuePreferredTopology = "kueue.x-k8s.io/podset-preferred-topology";

// "--switches=2", "--switches=2@0:10:00" (hours:minutes:seconds); "" without switches.
std::string slurm_switches_option(const TopologyHint& hint);

// The keys of the job file's `topology:` section, empty values left out.
nlohmann::json topology_to_json(const TopologyHint& hint);
// ErrorKind::invalid when the JSON is not what topology_to_json writes.
Result<TopologyHint> topology_from_json(const nlohmann::json& j);

}  // namespace orch
