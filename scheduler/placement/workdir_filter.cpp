#include "scheduler/placement/workdir_filter.h"

#include "scheduler/spec/provider_catalog.h"

namespace orch {

std::optional<std::string> workdir_refusal(const JobSpec& job, const ClusterSpec& cluster) {
  if (job.workdir.sha256.empty()) return std::nullopt;
  const ProviderTraits* p = find_provider(cluster.provider);
  if (p != nullptr && (p->data_route == DataRoute::local_fs || p->data_route == DataRoute::ssh)) {
    return std::nullopt;
  }
  return "its workdir cannot be staged to provider " + cluster.provider +
         " yet (local and Slurm clusters take one)";
}

std::optional<std::string> WorkdirFilter::reject(const PlacementRequest& req,
                                                 const ClusterView& cluster) const {
  if (req.job == nullptr || cluster.spec == nullptr) return std::nullopt;
  return workdir_refusal(*req.job, *cluster.spec);
}

}  // namespace orch
