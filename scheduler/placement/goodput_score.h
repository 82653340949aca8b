#pragma once
// The score that matters most: the job's expected useful FLOP/s on each cluster,
//   gpus x peak x expected MFU x expected ETTR        (scheduler/health/goodput.h)
// from the cluster's history (ClusterView::history) or, for a new cluster, the priors. It is
// relative: the pipeline divides it by the best feasible cluster's, so a cluster with a higher
// nominal peak but a poor MFU or a short MTBF can lose to a slower, steadier one. Under the
// goodput_per_cost objective (issue 45, cost_objective.h) each is divided by the cluster's price
// per GPU-hour, and the note says the price and the useful FLOP a unit of money buys there.

#include <string>
#include <vector>

#include "scheduler/health/goodput.h"
#include "scheduler/placement/plugin.h"

namespace orch {

class GoodputScore final : public ScorePlugin {
 public:
  explicit GoodputScore(GoodputPriors priors = {}) : priors_(priors) {}
  std::string_view name() const override { return "goodput"; }
  // Expected useful FLOP/s on this cluster judged alone, its move-in (data and checkpoint copy)
  // priced over the rest of the run (0 when the cluster's peak is unknown).
  double score(const PlacementRequest& req, const ClusterView& cluster) const override;
  // Next to each other: the expected useful work over the rest of the job's run per second of
  // it (expected_work_per_s), which prices moves and explores what is unmeasured.
  std::vector<double> score_all(const PlacementRequest& req,
                                const std::vector<ClusterView>& clusters,
                                const std::vector<bool>& feasible) const override;
  bool relative() const override { return true; }
  // The estimate's figures ("mfu 0.31, ettr 0.93, node mtbf 120 h, 2.31 PFLOP/s" once shown),
  // with the price and the FLOP per unit of money where the fleet has prices.
  ScoreNote note(const PlacementRequest& req, const ClusterView& cluster) const override;

  GoodputEstimate estimate(const PlacementRequest& req, const ClusterView& cluster) const;

 private:
  static void add_price(const PlacementRequest& req, const ClusterView& cluster, ScoreNote& n);
  GoodputPriors priors_;
};

// The priors with the node MTBF the whole fleet has shown (its node-hours and failures pooled
// over the prior's) where that is better than the prior's: a cluster with no history of its own
// is expected to fail no more often than the others do, or a fleet better than the prior would
// never try a new cluster; a lemon does not make every untried cluster look like one.
// Its weight is kPriorFailures of the fleet's failures' worth of node-hours (at least the prior's).
inline constexpr double kPriorFailures = 2;
GoodputPriors fleet_priors(const std::vector<ClusterView>& clusters, const GoodputPriors& priors);

// Moving for what it is worth (move_worth.h): for each cluster, the useful FLOP the job can
// expect over its horizon there, divided by the horizon (0 for an infeasible one). The horizon
// is the rest of its run (remaining_horizon_s of how long it has run, at req.now_ms); the move-in
// cost its data and checkpoint staging; the trial its MTBF there; the spread mfu_spread's.
std::vector<double> expected_work_per_s(const PlacementRequest& req,
                                        const std::vector<ClusterView>& clusters,
                                        const std::vector<bool>& feasible,
                                        const GoodputPriors& priors = {});

}  // namespace orch
