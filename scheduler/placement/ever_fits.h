#pragma once
// Could any configured cluster ever hold a job (issue 42)? Judged on what each cluster is, not
// on what is free now: its shape (nodes x GPUs per node), the memory and CPUs per node its site
// reported, whether the job may run there (placement.allowed; a retired cluster never comes
// back), its container and Slurm options. A node whose size the site has not reported yet is
// taken to fit: an inventory not yet known never refuses a job, and the text says so.

#include <optional>
#include <string>
#include <vector>

#include "scheduler/placement/plugin.h"

namespace orch {

// "8 nodes x 8 H100" (", 512G and 64 CPUs per node" after it where the site reported its
// nodes' sizes; "node sizes not reported yet" where the job asks for memory or CPUs and it has
// not): the largest job the cluster could ever hold.
std::string largest_shape(const ClusterView& cluster, const JobSpec& job);

// Why the cluster could never hold the job, or nullopt when it could (now or once free).
std::optional<std::string> never_holds(const JobSpec& job, const ClusterView& cluster);

// nullopt when some cluster could hold the job; otherwise "no configured cluster can ever hold
// this job (4 nodes x 64 GPUs): east offers at most 8 nodes x 8 H100; west at most 2 nodes x
// 4 A100 (not in placement.allowed)".
std::optional<std::string> fits_no_cluster(const JobSpec& job,
                                           const std::vector<ClusterView>& clusters);

}  // namespace orch
