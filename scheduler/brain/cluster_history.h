#pragma once
// What the store knows of each cluster's past, in the two shapes that use it: the facts of the
// provider scorecard (scheduler/health/scorecard.h) and the history behind the expected-goodput
// placement score (scheduler/health/goodput.h). Both come from one gathering, so the report a
// person reads and the numbers placement decides on cannot disagree.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
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

// The facts of every configured cluster from window_start to now. For placement, only what
// cluster_histories reads besides the save times: the attempts and the node failures (the
// clusters' rows, node counts, health log, stalls and tickets are the scorecard's; placement
// keeps the save times in a SaveTimeWindow).
Result<ScorecardInputs> gather_scorecard_inputs(StoreReader& store,
                                                const std::vector<ClusterSpec>& clusters,
                                                Millis now, Millis window_start,
                                                bool for_placement = false);

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

// The checkpoint save times of a sliding window, kept between reads: each refresh reads only
// the checkpoints recorded since the last one and lets go of those now older than the window
// (a month of a busy job is tens of thousands of saves; placement refreshes every
// kHistoryRefreshMs while a job waits). Per cluster, the median the history reports.
class SaveTimeWindow {
 public:
  Result<void> refresh(StoreReader& store, Millis window_start);
  std::optional<double> median(const std::string& cluster) const;
  // Forgets everything (the next refresh reads the window afresh): after a rolled-back
  // transaction, whose checkpoint ids may be handed out again.
  void reset();

 private:
  std::int64_t last_id_ = 0;
  Millis start_ = 0;  // the window's start at the last refresh
  std::multimap<Millis, std::pair<std::string, double>> by_time_;
  std::map<std::string, std::multiset<double>> by_cluster_;
};

// placement_histories with the save times from `saves`, refreshed here: the same histories, at
// the cost of what changed since the last refresh.
Result<ClusterHistories> placement_histories(StoreReader& store,
                                             const std::vector<ClusterSpec>& clusters, Millis now,
                                             SaveTimeWindow& saves);

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
