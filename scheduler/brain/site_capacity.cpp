// Other tenants' GPUs at a shared site (site_capacity.h).
#include "scheduler/brain/site_capacity.h"

#include <algorithm>

namespace orch {

int foreign_gpus(const std::vector<NodeRow>& nodes, int gpus_per_node, int ours_at_site) {
  int busy = 0;
  for (const auto& n : nodes) {
    // What the listing counts of our attempts that ended since is ours too (NodeRow).
    if (n.healthy && n.state == NodeState::active)
      busy += std::clamp(n.gpus_busy - n.gpus_ours_gone, 0, gpus_per_node);
  }
  return std::max(0, busy - ours_at_site);
}

}  // namespace orch
