#include "scheduler/placement/filters.h"

#include <algorithm>

namespace orch {

std::optional<std::string> AllowedClustersFilter::reject(const PlacementRequest& req,
                                                         const ClusterView& cluster) const {
  const auto& allowed = req.job->allowed_clusters;
  if (allowed.empty()) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), cluster.spec->name) != allowed.end()) {
    return std::nullopt;
  }
  return "not in the job's allowed clusters";
}

std::optional<std::string> SiteHealthyFilter::reject(const PlacementRequest&,
                                                     const ClusterView& cluster) const {
  if (cluster.health == SiteHealth::healthy) return std::nullopt;
  return "site is " + std::string(to_string(cluster.health));
}

std::optional<std::string> CapacityFilter::reject(const PlacementRequest& req,
                                                  const ClusterView& cluster) const {
  const JobSpec& job = *req.job;
  const ClusterSpec& c = *cluster.spec;
  if (job.gpus_per_node > c.gpus_per_node) {
    return "job needs " + std::to_string(job.gpus_per_node) +
           " GPUs per node, cluster nodes have " + std::to_string(c.gpus_per_node);
  }
  if (job.nodes > c.nodes) {
    return "job needs " + std::to_string(job.nodes) + " nodes, cluster has " +
           std::to_string(c.nodes);
  }
  // Whole nodes: a node is free when none of its GPUs are used. Local sites pack attempts onto
  // nodes in order, so free GPUs / GPUs per node is the number of nodes an attempt can get.
  int free_gpus = cluster.gpus_free();
  if (free_gpus < job.total_gpus()) {
    return "only " + std::to_string(std::max(free_gpus, 0)) + " of " +
           std::to_string(c.total_gpus()) + " GPUs free, job needs " +
           std::to_string(job.total_gpus());
  }
  return std::nullopt;
}

}  // namespace orch
