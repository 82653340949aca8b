#include "scheduler/placement/scores.h"

#include <algorithm>

namespace orch {

double FreeCapacityScore::score(const PlacementRequest& req, const ClusterView& cluster) const {
  int total = cluster.spec->total_gpus();
  if (total <= 0) return 0.0;
  int after = gpus_free(req, cluster) - req.job->total_gpus();
  return std::clamp(static_cast<double>(after) / total, 0.0, 1.0);
}

double PreferredClusterScore::score(const PlacementRequest& req, const ClusterView& cluster) const {
  const auto& pref = req.job->preferred_clusters;
  auto it = std::find(pref.begin(), pref.end(), cluster.spec->name);
  if (it == pref.end()) return 0.0;
  auto rank = static_cast<double>(it - pref.begin());
  return 1.0 - rank / static_cast<double>(pref.size());
}

double AvoidFailedSiteScore::score(const PlacementRequest& req, const ClusterView& cluster) const {
  return req.avoid_cluster && *req.avoid_cluster == cluster.spec->name ? 0.0 : 1.0;
}

}  // namespace orch
