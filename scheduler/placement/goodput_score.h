#pragma once
// The score that matters most: the job's expected useful FLOP/s on each cluster,
//   gpus x peak x expected MFU x expected ETTR        (scheduler/health/goodput.h)
// from the cluster's history (ClusterView::history) or, for a new cluster, the priors. It is
// relative: the pipeline divides it by the best feasible cluster's, so a cluster with a higher
// nominal peak but a poor MFU or a short MTBF can lose to a slower, steadier one.

#include <string>

#include "scheduler/health/goodput.h"
#include "scheduler/placement/plugin.h"

namespace orch {

class GoodputScore final : public ScorePlugin {
 public:
  explicit GoodputScore(GoodputPriors priors = {}) : priors_(priors) {}
  std::string_view name() const override { return "goodput"; }
  // Expected useful FLOP/s (0 when the cluster's peak is unknown).
  double score(const PlacementRequest& req, const ClusterView& cluster) const override;
  bool relative() const override { return true; }
  // The estimate's figures ("mfu 0.31, ettr 0.93, node mtbf 120 h, 2.31 PFLOP/s" once shown).
  ScoreNote note(const PlacementRequest& req, const ClusterView& cluster) const override;

  GoodputEstimate estimate(const PlacementRequest& req, const ClusterView& cluster) const;

 private:
  GoodputPriors priors_;
};

}  // namespace orch
