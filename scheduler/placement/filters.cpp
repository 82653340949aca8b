#include "scheduler/placement/filters.h"

#include <algorithm>

namespace orch {

std::vector<std::string> unusable_nodes(const PlacementRequest& req, const ClusterView& cluster) {
  std::vector<std::string> out = cluster.unhealthy_nodes;
  if (req.previous_cluster && *req.previous_cluster == cluster.spec->name) {
    for (const auto& n : req.avoid_nodes) {
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

int gpus_free(const PlacementRequest& req, const ClusterView& cluster) {
  const ClusterSpec& c = *cluster.spec;
  const int unusable = std::min(static_cast<int>(unusable_nodes(req, cluster).size()), c.nodes);
  return (c.nodes - unusable) * c.gpus_per_node - cluster.gpus_used;
}

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
  // Unhealthy nodes, and those the job's last attempt failed on, count as taken.
  int free_gpus = gpus_free(req, cluster);
  if (free_gpus < job.total_gpus()) {
    std::string msg = "only " + std::to_string(std::max(free_gpus, 0)) + " of " +
                      std::to_string(c.total_gpus()) + " GPUs free, job needs " +
                      std::to_string(job.total_gpus());
    auto unusable = unusable_nodes(req, cluster);
    if (!unusable.empty()) {
      msg += " (unusable node" + std::string(unusable.size() > 1 ? "s" : "") + ":";
      for (std::size_t i = 0; i < unusable.size() && i < 5; ++i) msg += " " + unusable[i];
      if (unusable.size() > 5) msg += " +" + std::to_string(unusable.size() - 5);
      msg += ")";
    }
    return msg;
  }
  return std::nullopt;
}

}  // namespace orch
