#pragma once
// `orchestrate serve` reads its clusters file again (SIGHUP, `orchestrate cluster reload`,
// POST /api/v1/clusters/reload), with the same validation as at start: an invalid file changes
// nothing and the error says where and why. A cluster no longer in the file drains (its jobs
// move at their next checkpoint); a new cluster is named and joins at the next restart, as do
// changes to the clusters that stay (the running site workers keep the spec they started with).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"
#include "scheduler/runtime/brain_loop.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

// {"added": [...], "removed": [...], "message": "..."}; invalid when the file is not valid.
Result<nlohmann::json> reload_clusters_file(const std::string& path,
                                            const std::vector<ClusterSpec>& running,
                                            BrainLoop& loop);

}  // namespace orch
