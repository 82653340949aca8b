#pragma once
// Runs every filter on every cluster, scores the survivors, and picks the best. Every cluster
// gets a verdict (feasible, or every filter that refused it), which `orchestrate job explain`
// shows.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/placement/plugin.h"

namespace orch {

struct ClusterVerdict {
  std::string cluster;
  bool feasible = false;
  // Filter name and its reason when rejected: the first filter's ("capacity: only 2 of 4 GPUs
  // free, job needs 4").
  std::string reason;
  // Every filter that rejects it, "name: reason" each, in the pipeline's order (reason is the
  // first); empty when feasible. `job explain` lists them all (refused_by).
  std::vector<std::string> refused_by;
  double score = 0.0;
  // When feasible, the score's breakdown as numbers: each plugin's weighted part, and what it is
  // made of when the plugin says. text() formats it only when someone reads it.
  std::vector<ScorePart> parts;

  // The reason when rejected; when feasible, the breakdown ("goodput=5.210 (mfu 0.35, ...)").
  std::string text() const { return feasible ? breakdown_text(parts) : reason; }
};

struct PlacementDecision {
  std::optional<std::string> chosen;
  std::vector<ClusterVerdict> verdicts;  // one per cluster, in input order

  // Why each infeasible cluster was ruled out, clusters with the same reason named together in
  // the input's order (the first five, then how many more; job explain lists them all):
  // "alpha, gamma: site is down; beta: only 0 of 4 GPUs free, job needs 2"
  std::string summary() const;
};

class PlacementPipeline {
 public:
  PlacementPipeline& add_filter(std::unique_ptr<FilterPlugin> filter);
  PlacementPipeline& add_score(std::unique_ptr<ScorePlugin> score, double weight);

  PlacementDecision place(const PlacementRequest& req,
                          const std::vector<ClusterView>& clusters) const;
  // The first filter's "name: reason" that rejects the cluster, or nullopt when all pass.
  std::optional<std::string> rejection(const PlacementRequest& req,
                                       const ClusterView& cluster) const;
  // Every filter's "name: reason" that rejects the cluster, in order; empty when all pass.
  std::vector<std::string> rejections(const PlacementRequest& req,
                                      const ClusterView& cluster) const;

  // Filters: allowed-clusters, site-healthy, admission, preflight, job-shape (issue 40), capacity,
  // quota, held. Scores: goodput (x6, relative), move-worth (x1.5), avoid-failed-site (x4),
  // preferred (x2), free-capacity (x1). Goodput is the useful work expected over the rest of the
  // job's run per second of it, net of moving there and counting what an unmeasured cluster may
  // turn out to be (issue 38, move_worth.h); move-worth gives a resumed job's own cluster, and any
  // cluster where that work is more, x1.5, so spreading (free capacity) never moves it, while a
  // move that pays is decided by goodput with no fixed ratio.
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
