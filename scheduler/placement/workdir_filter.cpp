#include "scheduler/placement/workdir_filter.h"

#include "scheduler/data/code_staging.h"

namespace orch {

std::optional<std::string> workdir_refusal(const JobSpec& job, const ClusterSpec& cluster) {
  if (!job.workdir.sha256.empty()) return code_route_refusal(cluster);
  // A setup without code keeps its lock and cache under the storage root too: on Kubernetes
  // that must be a volume every pod shares, else each pod would run it again.
  if (job.setup.empty() || cluster.provider != "kubernetes") return std::nullopt;
  auto why = code_route_refusal(cluster);
  if (!why) return std::nullopt;
  const std::string staged = "its workdir cannot be staged to";
  if (why->starts_with(staged)) why = "its setup cannot run on" + why->substr(staged.size());
  return why;
}

std::optional<std::string> WorkdirFilter::reject(const PlacementRequest& req,
                                                 const ClusterView& cluster) const {
  if (req.job == nullptr || cluster.spec == nullptr) return std::nullopt;
  return workdir_refusal(*req.job, *cluster.spec);
}

}  // namespace orch
