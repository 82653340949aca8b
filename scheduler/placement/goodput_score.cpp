// The expected-goodput score (goodput_score.h).
#include "scheduler/placement/goodput_score.h"

#include <algorithm>

#include "scheduler/placement/cost_objective.h"
#include "scheduler/placement/move_worth.h"

namespace orch {

GoodputEstimate GoodputScore::estimate(const PlacementRequest& req,
                                       const ClusterView& cluster) const {
  const double peak = cluster.spec->peak_flops_per_gpu().value_or(0);
  return estimate_goodput(req.job->nodes, req.job->total_gpus(), peak, cluster.history, priors_);
}

namespace {

double seconds_at(const std::map<std::string, double>& per_cluster, const std::string& name) {
  if (per_cluster.empty()) return 0.0;
  auto it = per_cluster.find(name);
  return it == per_cluster.end() ? 0.0 : it->second;
}

// What moving the job to the cluster costs: copying its datasets and its newest checkpoint
// there; nothing where it ran last.
double move_in_s(const PlacementRequest& req, const std::string& name) {
  if (req.previous_cluster && *req.previous_cluster == name) return 0.0;
  return seconds_at(req.staging_s, name) + seconds_at(req.checkpoint_copy_s, name);
}

double horizon_of(const PlacementRequest& req) {
  const double ran_s =
      req.run_started_ms ? static_cast<double>(req.now_ms - *req.run_started_ms) / 1000.0 : 0.0;
  return remaining_horizon_s(ran_s, req.job->expected_run_s);
}

}  // namespace

GoodputPriors fleet_priors(const std::vector<ClusterView>& clusters, const GoodputPriors& priors) {
  GoodputPriors out = priors;
  double hours = std::max(priors.prior_node_hours, 0.0);
  double failures = priors.node_mtbf_h > 0 ? hours / priors.node_mtbf_h : 0;
  for (const ClusterView& c : clusters) {
    hours += std::max(c.history.node_hours, 0.0);
    failures += std::max(c.history.node_failures, 0);
  }
  if (failures > 0) out.node_mtbf_h = std::max(priors.node_mtbf_h, hours / failures);
  // Weighed as kPriorFailures failures of it: one early failure of a cluster is not a verdict
  // (with the fixed prior's 500 node-hours, a failure in the first 69 node-hours of a 256-node
  // job made a cluster look like a lemon with a 455 h MTBF for the whole history window).
  out.prior_node_hours = std::max(priors.prior_node_hours, kPriorFailures * out.node_mtbf_h);
  return out;
}

std::vector<double> expected_work_per_s(const PlacementRequest& req,
                                        const std::vector<ClusterView>& clusters,
                                        const std::vector<bool>& feasible,
                                        const GoodputPriors& priors) {
  const GoodputPriors fleet = fleet_priors(clusters, priors);
  std::vector<ClusterOutlook> outlooks(clusters.size());
  std::optional<std::size_t> current;
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    const ClusterView& c = clusters[i];
    ClusterOutlook& o = outlooks[i];
    o.feasible = feasible[i];
    if (!o.feasible) continue;
    const std::string& name = c.spec->name;
    const bool own = req.previous_cluster && *req.previous_cluster == name;
    if (own) current = i;
    const GoodputEstimate e =
        estimate_goodput(req.job->nodes, req.job->total_gpus(),
                         c.spec->peak_flops_per_gpu().value_or(0), c.history, fleet);
    o.mfu_mean = e.expected_mfu;
    o.flops_per_mfu = e.expected_mfu > 0 ? e.flops / e.expected_mfu : 0;
    o.measured = c.history.mfu.has_value();
    // Where it ran last, the job itself just measured it: known, not a trial (else staying
    // looks like "stay a while, then move" and every move shrinks to one MTBF's worth).
    o.mfu_sd = own && o.measured ? 0.0 : mfu_spread(c.history, req.now_ms, priors);
    o.trial_s = e.job_mtbf_s;
    o.move_in_s = move_in_s(req, name);
  }
  const double horizon_s = horizon_of(req);
  std::vector<double> work = expected_work(outlooks, horizon_s, current);
  for (double& w : work) w /= horizon_s;
  return work;
}

std::vector<double> GoodputScore::score_all(const PlacementRequest& req,
                                            const std::vector<ClusterView>& clusters,
                                            const std::vector<bool>& feasible) const {
  return objective_work_per_s(req, clusters, feasible, priors_);
}

// Time spent copying the job's data and checkpoint there is time not training: the goodput over
// the rest of its run shrinks by horizon / (horizon + move), as in expected_work_per_s.
double GoodputScore::score(const PlacementRequest& req, const ClusterView& cluster) const {
  const double horizon_s = horizon_of(req);
  return per_objective(req, cluster,
                       estimate(req, cluster).flops *
                           after_move(horizon_s, move_in_s(req, cluster.spec->name)) / horizon_s);
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
  n.staging_s = move_in_s(req, cluster.spec->name);
  const double horizon_s = horizon_of(req);
  n.staging_factor = after_move(horizon_s, n.staging_s) / horizon_s;
  add_price(req, cluster, n);
  return n;
}

void GoodputScore::add_price(const PlacementRequest& req, const ClusterView& cluster,
                             ScoreNote& n) {
  n.per_cost = req.objective == PlacementObjective::goodput_per_cost;
  if (!cluster.spec->price.configured && !cluster.price_assumed) return;  // a fleet without prices
  n.priced = cluster.price_assumed ? ScoreNote::Priced::assumed : ScoreNote::Priced::own;
  n.price_per_gpu_hour = cluster.price_per_gpu_hour;
  n.currency = cluster.spec->price.currency;
  if (!cluster.price_assumed) {
    n.flop_per_money = flop_per_money(n.flops, req.job->total_gpus(), n.price_per_gpu_hour);
  }
}

}  // namespace orch
