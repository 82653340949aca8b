#pragma once
// Runs every filter on every cluster, scores the survivors, and picks the best. Every cluster
// gets a verdict (feasible or the first filter's reason), which `orchestrate job explain` shows.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/placement/plugin.h"

namespace orch {

struct ClusterVerdict {
  std::string cluster;
  bool feasible = false;
  std::string reason;  // filter name and its reason when rejected; score breakdown when feasible
  double score = 0.0;
};

struct PlacementDecision {
  std::optional<std::string> chosen;
  std::vector<ClusterVerdict> verdicts;  // one per cluster, in input order

  // "alpha: site is down; beta: only 0 of 4 GPUs free, job needs 2"
  std::string summary() const;
};

class PlacementPipeline {
 public:
  PlacementPipeline& add_filter(std::unique_ptr<FilterPlugin> filter);
  PlacementPipeline& add_score(std::unique_ptr<ScorePlugin> score, double weight);

  PlacementDecision place(const PlacementRequest& req,
                          const std::vector<ClusterView>& clusters) const;

  // allowed-clusters, site-healthy, capacity; same-site (x4), avoid-failed-site (x4),
  // preferred (x2), free-capacity (x1).
  static PlacementPipeline standard();

 private:
  struct WeightedScore {
    std::unique_ptr<ScorePlugin> plugin;
    double weight;
  };
  std::vector<std::unique_ptr<FilterPlugin>> filters_;
  std::vector<WeightedScore> scores_;
};

}  // namespace orch
