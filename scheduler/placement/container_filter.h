#pragma once
// Only clusters that can run the job's `container:` (issue 40; scheduler/spec/container_support.h).

#include "scheduler/placement/plugin.h"

namespace orch {

class ContainerFilter final : public FilterPlugin {
 public:
  std::string_view name() const override { return "container"; }
  std::optional<std::string> reject(const PlacementRequest& req,
                                    const ClusterView& cluster) const override;
};

}  // namespace orch
