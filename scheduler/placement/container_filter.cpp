#include "scheduler/placement/container_filter.h"

#include "scheduler/spec/container_support.h"

namespace orch {

std::optional<std::string> ContainerFilter::reject(const PlacementRequest& req,
                                                   const ClusterView& cluster) const {
  if (req.job == nullptr || cluster.spec == nullptr) return std::nullopt;
  return container_refusal(*req.job, *cluster.spec);
}

}  // namespace orch
