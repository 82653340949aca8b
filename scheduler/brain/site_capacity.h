#pragma once
// What a shared site says of its capacity beyond orchestrate's own books: the GPUs other
// tenants' jobs hold. Placement and the cluster list read it the same way, from here.

#include <vector>

#include "scheduler/store/rows.h"

namespace orch {

// GPUs other tenants hold at a cluster: the busy GPUs its site reports on nodes placement may
// use (healthy and active; each at most gpus_per_node) beyond `ours_at_site`, the GPUs of
// orchestrate's attempts the site has started (GpusInUse::at_site; one still in its queue holds
// none there), and less, on each node, the GPUs of our attempts that ended there since the site
// listed it (NodeRow::gpus_ours_gone): our own attempts are never another tenant's. The site's
// report lags a poll: an attempt it started since makes this low for a poll.
int foreign_gpus(const std::vector<NodeRow>& nodes, int gpus_per_node, int ours_at_site);

}  // namespace orch
