#pragma once
// What the store knows of each cluster's past, in the two shapes that use it: the facts of the
// provider scorecard (scheduler/health/scorecard.h) and the history behind the expected-goodput
// placement score (scheduler/health/goodput.h). Both come from one gathering, so the report a
// person reads and the numbers placement decides on cannot disagree.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "scheduler/health/goodput.h"
#include "scheduler/health/scorecard.h"
#include "scheduler/spec/cluster_registry.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/store_reader.h"

namespace orch {

// Ledger kinds that count as a node failure for MTBF: a node lost under a job, a GPU fault.
inline const std::vector<std::string> kNodeFailureKinds = {"node-failure", "gpu-error"};

// The facts of every configured cluster from window_start to now.
Result<ScorecardInputs> gather_scorecard_inputs(StoreReader& store,
                                                const std::vector<ClusterSpec>& clusters,
                                                Millis now, Millis window_start);

// Per cluster: MFU (its attempts' work over their time), node-hours under attempts and node
// failures in them, checkpoint cost (median save time) and restart time (median detection +
// median recovery).
std::map<std::string, ClusterHistory> cluster_histories(const ScorecardInputs& in);

// How far back placement looks, and how often it looks again.
inline constexpr Millis kHistoryWindowMs = 30LL * 24 * 3600 * 1000;
inline constexpr Millis kHistoryRefreshMs = 30'000;

using ClusterHistories = std::map<std::string, ClusterHistory>;

// The histories placement decides on: the last kHistoryWindowMs. What an unmeasured cluster may
// be worth is placement's to weigh (scheduler/placement/move_worth.h), not made up here.
Result<ClusterHistories> placement_histories(StoreReader& store,
                                             const std::vector<ClusterSpec>& clusters, Millis now);

// placement_histories computed at most once per kHistoryRefreshMs and shared by the threads
// that answer requests: a read that needs them costs a lookup, not a scan of the window. While
// one thread refreshes, the others keep answering from the previous copy.
class HistoryCache {
 public:
  // The clusters are read at each refresh: one that joins is counted from the next.
  explicit HistoryCache(const ClusterRegistry& clusters) : clusters_(clusters) {}
  Result<std::shared_ptr<const ClusterHistories>> get(StoreReader& store, Millis now);

 private:
  const ClusterRegistry& clusters_;
  std::mutex mu_;
  std::shared_ptr<const ClusterHistories> value_;
  Millis at_ms_ = 0;
  bool refreshing_ = false;
};

}  // namespace orch
