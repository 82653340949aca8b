// The expected-goodput score (goodput_score.h).
#include "scheduler/placement/goodput_score.h"

#include "scheduler/data/staging.h"

#include <array>
#include <cstdio>

#include "scheduler/model/accelerators.h"

namespace orch {
namespace {

// 2.31 PFLOP/s, 989 TFLOP/s, 35 GFLOP/s: three figures in the largest unit that fits.
std::string flops_text(double flops) {
  static constexpr std::array<std::pair<double, const char*>, 4> units = {
      {{1e18, "EFLOP/s"}, {1e15, "PFLOP/s"}, {1e12, "TFLOP/s"}, {1e9, "GFLOP/s"}}};
  for (const auto& [scale, unit] : units) {
    if (flops >= scale) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.3g %s", flops / scale, unit);
      return buf;
    }
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g FLOP/s", flops);
  return buf;
}

}  // namespace

GoodputEstimate GoodputScore::estimate(const PlacementRequest& req,
                                       const ClusterView& cluster) const {
  const double peak = cluster.spec->peak_flops_per_gpu().value_or(0);
  return estimate_goodput(req.job->nodes, req.job->total_gpus(), peak, cluster.history, priors_);
}

namespace {
double staging_of(const PlacementRequest& req, const ClusterView& cluster) {
  auto it = req.staging_s.find(cluster.spec->name);
  return it == req.staging_s.end() ? 0.0 : it->second;
}
}  // namespace

// Time spent copying the job's data there is time not training: the goodput over the job's
// horizon shrinks by horizon / (horizon + staging).
double GoodputScore::score(const PlacementRequest& req, const ClusterView& cluster) const {
  return estimate(req, cluster).flops * staging_factor(staging_of(req, cluster));
}

std::string GoodputScore::explain(const PlacementRequest& req, const ClusterView& cluster) const {
  if (!cluster.spec->peak_flops_per_gpu()) {
    return "peak unknown for accelerator \"" + cluster.spec->accelerator + "\"";
  }
  const GoodputEstimate e = estimate(req, cluster);
  const double mtbf_h = e.node_mtbf_s / 3600;
  char buf[128];
  std::snprintf(buf, sizeof buf,
                mtbf_h >= 10 ? "mfu %.2f, ettr %.2f, node mtbf %.0f h, %s"
                             : "mfu %.2f, ettr %.2f, node mtbf %.2g h, %s",
                e.expected_mfu, e.ettr, mtbf_h, flops_text(e.flops).c_str());
  std::string text = buf;
  if (const double s = staging_of(req, cluster); s > 0) {
    std::snprintf(buf, sizeof buf, ", data staging %.0f s (x%.3f)", s, staging_factor(s));
    text += buf;
  }
  return text;
}

}  // namespace orch
