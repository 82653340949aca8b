// Goodput per unit of money (cost_objective.h).
#include "scheduler/placement/cost_objective.h"

#include <algorithm>

#include "scheduler/model/price.h"
#include "scheduler/placement/goodput_score.h"

namespace orch {

std::string_view to_string(PlacementObjective objective) {
  return objective == PlacementObjective::goodput_per_cost ? "goodput_per_cost" : "goodput";
}

namespace {

PlacementObjective parse(const std::string& name) {
  return name == "goodput_per_cost" ? PlacementObjective::goodput_per_cost
                                    : PlacementObjective::goodput;
}

}  // namespace

PlacementObjective objective_of(const SchedulingSpec& scheduling, const std::string& team) {
  if (auto it = scheduling.teams.find(team); it != scheduling.teams.end() && it->second.objective) {
    return parse(*it->second.objective);
  }
  return parse(scheduling.objective);
}

void fill_prices(std::vector<ClusterView>& views, Millis now_ms) {
  double dearest = 0;
  bool any = false;
  for (ClusterView& v : views) {
    v.price_assumed = false;
    v.price_per_gpu_hour = 0;
    if (!v.spec->price.configured) continue;
    any = true;
    v.price_per_gpu_hour = price_at(v.spec->price, now_ms);
    dearest = std::max(dearest, v.price_per_gpu_hour);
  }
  if (!any) return;
  for (ClusterView& v : views) {
    if (v.spec->price.configured) continue;
    v.price_per_gpu_hour = dearest;
    v.price_assumed = true;
  }
}

double flop_per_money(double flops_per_s, int gpus, double price_per_gpu_hour) {
  if (gpus <= 0 || price_per_gpu_hour <= 0) return 0;
  return flops_per_s * 3600 / (gpus * price_per_gpu_hour);
}

double per_objective(const PlacementRequest& req, const ClusterView& cluster, double flops_per_s) {
  if (req.objective != PlacementObjective::goodput_per_cost) return flops_per_s;
  return flops_per_s / std::max(cluster.price_per_gpu_hour, kFreePricePerGpuHour);
}

std::vector<double> objective_work_per_s(const PlacementRequest& req,
                                         const std::vector<ClusterView>& clusters,
                                         const std::vector<bool>& feasible,
                                         const GoodputPriors& priors) {
  std::vector<double> work = expected_work_per_s(req, clusters, feasible, priors);
  for (std::size_t i = 0; i < clusters.size(); ++i)
    work[i] = per_objective(req, clusters[i], work[i]);
  return work;
}

}  // namespace orch
