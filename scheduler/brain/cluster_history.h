#pragma once
// What the store knows of each cluster's past, in the two shapes that use it: the facts of the
// provider scorecard (scheduler/health/scorecard.h) and the history behind the expected-goodput
// placement score (scheduler/health/goodput.h). Both come from one gathering, so the report a
// person reads and the numbers placement decides on cannot disagree.

#include <map>
#include <string>
#include <vector>

#include "scheduler/health/goodput.h"
#include "scheduler/health/scorecard.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/store.h"

namespace orch {

// Ledger kinds that count as a node failure for MTBF: a node lost under a job, a GPU fault.
inline const std::vector<std::string> kNodeFailureKinds = {"node-failure", "gpu-error"};

// The facts of every configured cluster from window_start to now.
Result<ScorecardInputs> gather_scorecard_inputs(Store& store,
                                                const std::vector<ClusterSpec>& clusters,
                                                Millis now, Millis window_start);

// Per cluster: median MFU, node-hours under attempts and node failures in them, checkpoint cost
// (median save time) and restart time (median detect-to-resume).
std::map<std::string, ClusterHistory> cluster_histories(const ScorecardInputs& in);

}  // namespace orch
