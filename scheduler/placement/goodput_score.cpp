// The expected-goodput score (goodput_score.h).
#include "scheduler/placement/goodput_score.h"

#include "scheduler/data/staging.h"

namespace orch {

GoodputEstimate GoodputScore::estimate(const PlacementRequest& req,
                                       const ClusterView& cluster) const {
  const double peak = cluster.spec->peak_flops_per_gpu().value_or(0);
  return estimate_goodput(req.job->nodes, req.job->total_gpus(), peak, cluster.history, priors_);
}

namespace {
double staging_of(const PlacementRequest& req, const ClusterView& cluster) {
  if (req.staging_s.empty()) return 0.0;
  auto it = req.staging_s.find(cluster.spec->name);
  return it == req.staging_s.end() ? 0.0 : it->second;
}
}  // namespace

// Time spent copying the job's data there is time not training: the goodput over the job's
// horizon shrinks by horizon / (horizon + staging).
double GoodputScore::score(const PlacementRequest& req, const ClusterView& cluster) const {
  return estimate(req, cluster).flops * staging_factor(staging_of(req, cluster));
}

ScoreNote GoodputScore::note(const PlacementRequest& req, const ClusterView& cluster) const {
  ScoreNote n;
  if (!cluster.spec->peak_flops_per_gpu()) {
    n.kind = ScoreNote::Kind::peak_unknown;
    n.accelerator = cluster.spec->accelerator;
    return n;
  }
  const GoodputEstimate e = estimate(req, cluster);
  n.kind = ScoreNote::Kind::goodput;
  n.mfu = e.expected_mfu;
  n.ettr = e.ettr;
  n.node_mtbf_s = e.node_mtbf_s;
  n.flops = e.flops;
  n.staging_s = staging_of(req, cluster);
  n.staging_factor = staging_factor(n.staging_s);
  return n;
}

}  // namespace orch
