#pragma once
// The standard scores, each in [0, 1].

#include "scheduler/placement/plugin.h"

namespace orch {

// Share of the cluster's GPUs still free after this job lands: spreads load.
class FreeCapacityScore final : public ScorePlugin {
 public:
  std::string_view name() const override { return "free-capacity"; }
  double score(const PlacementRequest& req, const ClusterView& cluster) const override;
};

// The job's `placement.preferred` list, first entry best.
class PreferredClusterScore final : public ScorePlugin {
 public:
  std::string_view name() const override { return "preferred"; }
  double score(const PlacementRequest& req, const ClusterView& cluster) const override;
};

// After a failed launch (or an attempt the site lost) every other site is better: scores 1
// everywhere but there. It still allows that site when it is the only one that fits.
class AvoidFailedSiteScore final : public ScorePlugin {
 public:
  std::string_view name() const override { return "avoid-failed-site"; }
  double score(const PlacementRequest& req, const ClusterView& cluster) const override;
};

}  // namespace orch
