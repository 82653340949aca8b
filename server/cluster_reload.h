#pragma once
// `orchestrate serve` reads its clusters file again (SIGHUP, `orchestrate cluster reload`,
// POST /api/v1/clusters/reload), with the same validation as at start: an invalid file changes
// nothing and the error says where and why. A cluster no longer in the file drains (its jobs
// move at their next checkpoint); a new cluster joins now (through `join`, which starts its
// site); the file's `secrets:` are read again from their sources. Changes to the clusters that
// stay take effect at the next restart (the running site
// workers keep the spec they started with), and the message says so.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"
#include "scheduler/runtime/brain_loop.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

// Starts the sites of clusters new to the server and admits them (the composition root's).
using JoinClusters = std::function<Result<void>(const std::vector<ClusterSpec>&)>;
// Takes what the file says beyond its clusters (its `secrets:`), before any cluster changes; an
// error leaves everything as it was.
using TakeFile = std::function<Result<void>(const ClustersFile&)>;

// {"added": [...], "removed": [...], "message": "..."}; invalid when the file is not valid.
// from_file: the clusters the file has held since the start, to which the added are appended;
// also_known: the other clusters running (added by `cluster add`), which data.pull_from may
// name and which no longer being in the file does not drain.
Result<nlohmann::json> reload_clusters_file(const std::string& path,
                                            std::vector<ClusterSpec>& from_file,
                                            const std::vector<std::string>& also_known,
                                            BrainLoop& loop, const JoinClusters& join,
                                            const TakeFile& take = nullptr);

}  // namespace orch
