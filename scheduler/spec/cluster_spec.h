#pragma once
// One rented cluster ("site") as declared in the clusters file.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace orch {

struct ClusterSpec {
  std::string name;
  std::string provider = "local";        // local | slurm | kubernetes (later issues)
  int nodes = 1;                         // node count (local: virtual nodes)
  int gpus_per_node = 1;                 // local: slots standing in for GPUs
  std::string accelerator = "cpu-slot";  // key in the accelerator table
  std::optional<double> peak_tflops;     // overrides the table's peak per accelerator
  std::string storage_root;     // run directories live here (local: default <state>/sites/<name>)
  std::string checkpoint_root;  // where checkpoints of jobs on this site live
  double unreachable_grace_s = 180.0;  // how long a silent site keeps its jobs before failover
  int poll_interval_ms = 1000;         // how often the site worker polls

  int total_gpus() const { return nodes * gpus_per_node; }
};

struct ServerSpec {
  std::string bind = "127.0.0.1";
  int port = 8080;
};

struct ClustersFile {
  ServerSpec server;
  std::vector<ClusterSpec> clusters;
};

}  // namespace orch
