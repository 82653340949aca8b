#pragma once
// Whether a resumed job stays where it ran (issue 38, item 3): 1 on the cluster it ran on last,
// and on any other where the useful work it can expect over the rest of its run, net of the
// move (expected_work_per_s, move_worth.h), exceeds what it can expect by staying (by more than
// kMoveMargin for a cluster measured before: what two measured MFUs differ by on
// identical clusters; without it a job hops between equal clusters on noise, paying a copy each
// time; a cluster never measured is priced by its spread instead); 0 elsewhere,
// and 0 everywhere for a job that is not resuming or whose cluster cannot take it now. It keeps
// spreading (free capacity) from moving a job, while a move that pays is priced by goodput and
// not barred by a fixed ratio. Under goodput_per_cost the work compared is per unit of money
// (objective_work_per_s, cost_objective.h).

#include <vector>

#include "scheduler/health/goodput.h"
#include "scheduler/placement/plugin.h"

namespace orch {

inline constexpr double kMoveMargin = 0.01;

class MoveWorthScore final : public ScorePlugin {
 public:
  explicit MoveWorthScore(GoodputPriors priors = {}) : priors_(priors) {}
  std::string_view name() const override { return "move-worth"; }
  // Judged alone: 1 on the cluster the job ran on last.
  double score(const PlacementRequest& req, const ClusterView& cluster) const override;
  std::vector<double> score_all(const PlacementRequest& req,
                                const std::vector<ClusterView>& clusters,
                                const std::vector<bool>& feasible) const override;

 private:
  GoodputPriors priors_;
};

}  // namespace orch
