// The useful work a job can expect on each cluster over the rest of its run (move_worth.h).
#include "scheduler/placement/move_worth.h"

#include <algorithm>
#include <cmath>

namespace orch {

double remaining_horizon_s(double ran_s, std::optional<double> expected_run_s) {
  if (expected_run_s) return std::max(*expected_run_s - ran_s, kMinHorizonS);
  return std::max(ran_s, kMinHorizonS);
}

double after_move(double horizon_s, double move_s) {
  return horizon_s * horizon_s / (horizon_s + std::max(move_s, 0.0));
}

double expected_max(double mean, double sd, double k) {
  if (!(sd > 0)) return std::max(mean, k);
  const double z = (mean - k) / sd;
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
  const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  return k + (mean - k) * cdf + sd * pdf;
}

namespace {

double positive(double x) {
  return std::max(x, 0.0);
}

// K: the best a job can do over `left_s` on a measured cluster other than c, having to come
// back from c (the copy to its last cluster costs what the copy from it did; to any other, its
// own). Over the measured ones only: a fleet of unmeasured clusters costs nothing here.
double fallback_work(const std::vector<ClusterOutlook>& clusters,
                     const std::vector<std::size_t>& measured, std::size_t c, double left_s,
                     std::optional<std::size_t> current) {
  double best = 0;
  for (std::size_t b : measured) {
    if (b == c) continue;
    const ClusterOutlook& o = clusters[b];
    const double back_s = current && b == *current ? clusters[c].move_in_s : o.move_in_s;
    best = std::max(best, o.flops_per_mfu * o.mfu_mean * positive(left_s - back_s));
  }
  return best;
}

}  // namespace

std::vector<double> expected_work(const std::vector<ClusterOutlook>& clusters, double horizon_s,
                                  std::optional<std::size_t> current) {
  std::vector<double> out(clusters.size(), 0.0);
  std::vector<std::size_t> measured;
  for (std::size_t b = 0; b < clusters.size(); ++b) {
    if (clusters[b].feasible && clusters[b].measured) measured.push_back(b);
  }
  for (std::size_t c = 0; c < clusters.size(); ++c) {
    const ClusterOutlook& o = clusters[c];
    if (!o.feasible || !(o.flops_per_mfu > 0)) continue;
    const double move_s = o.move_in_s;
    const double trial_s = std::clamp(o.trial_s, 0.0, horizon_s);
    // Known; or nothing learnt in time to act on (the run ends first, or the copy outlasts the
    // trial): what it runs at, over what the move leaves of the horizon.
    if (!(o.mfu_sd > 0) || trial_s >= horizon_s || move_s >= trial_s) {
      out[c] = o.flops_per_mfu * o.mfu_mean * after_move(horizon_s, move_s);
      continue;
    }
    const double after_s = horizon_s - trial_s;
    const double k = fallback_work(clusters, measured, c, after_s, current);
    const double scale = o.flops_per_mfu * after_s;
    out[c] = o.flops_per_mfu * o.mfu_mean * (trial_s - move_s) +
             expected_max(scale * o.mfu_mean, scale * o.mfu_sd, k);
  }
  return out;
}

}  // namespace orch
