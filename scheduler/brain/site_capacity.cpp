// Other tenants' GPUs at a shared site (site_capacity.h).
#include "scheduler/brain/site_capacity.h"

#include <algorithm>

namespace orch {

int foreign_gpus(const std::vector<NodeRow>& nodes, int gpus_per_node, int ours_at_site) {
  int busy = 0;
  for (const auto& n : nodes) {
    if (n.healthy && n.state == NodeState::active)
      busy += std::clamp(n.gpus_busy, 0, gpus_per_node);
  }
  return std::max(0, busy - ours_at_site);
}

}  // namespace orch
