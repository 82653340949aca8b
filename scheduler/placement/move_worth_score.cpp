// The move-worth score (move_worth_score.h).
#include "scheduler/placement/move_worth_score.h"

#include "scheduler/placement/cost_objective.h"

namespace orch {

double MoveWorthScore::score(const PlacementRequest& req, const ClusterView& cluster) const {
  return req.previous_cluster && *req.previous_cluster == cluster.spec->name ? 1.0 : 0.0;
}

std::vector<double> MoveWorthScore::score_all(const PlacementRequest& req,
                                              const std::vector<ClusterView>& clusters,
                                              const std::vector<bool>& feasible) const {
  std::vector<double> out(clusters.size(), 0.0);
  std::size_t current = clusters.size();
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    if (feasible[i] && score(req, clusters[i]) > 0) current = i;
  }
  if (current == clusters.size()) return out;
  const std::vector<double> work = objective_work_per_s(req, clusters, feasible, priors_);
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    // A measured cluster must beat it by more than measurements differ by; a trial of one never
    // measured is priced by its spread already.
    const double margin = clusters[i].history.mfu ? kMoveMargin : 0.0;
    if (feasible[i] && (i == current || work[i] > work[current] * (1 + margin))) out[i] = 1.0;
  }
  return out;
}

}  // namespace orch
