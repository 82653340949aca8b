// Expected goodput of a job on a cluster (goodput.h): Young's interval, the first-order ETTR,
// and the MTBF from a prior pulled towards the cluster's history.
#include "scheduler/health/goodput.h"

#include <algorithm>
#include <cmath>

namespace orch {

double young_interval_s(double checkpoint_cost_s, double mtbf_s) {
  if (!(checkpoint_cost_s > 0) || !(mtbf_s > 0)) return 0;
  return std::sqrt(2 * checkpoint_cost_s * mtbf_s);
}

double expected_ettr(double checkpoint_cost_s, double interval_s, double restart_s, double mtbf_s) {
  if (!(mtbf_s > 0)) return 0;
  const double cost = std::max(checkpoint_cost_s, 0.0);
  // Free checkpoints can be taken continuously (tau -> 0): only the restart is lost.
  double checkpoint_share = 0;
  if (cost > 0) {
    if (!(interval_s > 0)) return 0;
    checkpoint_share = cost / interval_s;
  }
  const double lost_share = (std::max(interval_s, 0.0) / 2 + std::max(restart_s, 0.0)) / mtbf_s;
  return std::clamp(1 - checkpoint_share - lost_share, 0.0, 1.0);
}

double mfu_spread(const ClusterHistory& history, std::int64_t now_ms, const GoodputPriors& priors) {
  if (!history.mfu) return priors.mfu_sd;
  double variance = 0;
  if (history.mfu_hours > 0 || history.mfu_measured_ms) {  // unknown (a test's history): exact
    const double h = std::max(priors.mfu_evidence_h, 0.0);
    variance = priors.mfu_sd * priors.mfu_sd * h / (h + std::max(history.mfu_hours, 0.0));
  }
  if (history.mfu_measured_ms && now_ms > *history.mfu_measured_ms) {
    const double age_days = static_cast<double>(now_ms - *history.mfu_measured_ms) / 86'400'000.0;
    const double drift = priors.mfu_drift_per_day * age_days;
    variance += drift * drift;
  }
  return std::min(priors.mfu_sd, std::sqrt(variance));
}

GoodputEstimate estimate_goodput(int nodes, int gpus, double peak_flops_per_gpu,
                                 const ClusterHistory& history, const GoodputPriors& priors) {
  GoodputEstimate e;
  // The prior counts as prior_node_hours of evidence with prior_node_hours / prior_node_mtbf_h
  // failures in it; the history adds its own hours and failures.
  const double prior_failures =
      priors.node_mtbf_h > 0 ? priors.prior_node_hours / priors.node_mtbf_h : 0;
  const double hours = std::max(priors.prior_node_hours, 0.0) + std::max(history.node_hours, 0.0);
  const double failures = prior_failures + std::max(history.node_failures, 0);
  const double node_mtbf_h = failures > 0 ? hours / failures : priors.node_mtbf_h;
  e.node_mtbf_s = node_mtbf_h * 3600;
  e.job_mtbf_s = e.node_mtbf_s / std::max(nodes, 1);
  e.expected_mfu = history.mfu.value_or(priors.mfu);
  e.checkpoint_cost_s = history.checkpoint_cost_s.value_or(priors.checkpoint_cost_s);
  e.restart_s = history.restart_s.value_or(priors.restart_s);
  e.interval_s = young_interval_s(e.checkpoint_cost_s, e.job_mtbf_s);
  e.ettr = expected_ettr(e.checkpoint_cost_s, e.interval_s, e.restart_s, e.job_mtbf_s);
  e.flops = std::max(gpus, 0) * std::max(peak_flops_per_gpu, 0.0) * std::max(e.expected_mfu, 0.0) *
            e.ettr;
  return e;
}

const char* advice_basis(const ClusterHistory& history) {
  return history.checkpoint_cost_s && history.node_hours > 0 ? "measured" : "prior";
}

}  // namespace orch
