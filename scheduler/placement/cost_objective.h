#pragma once
// Goodput per unit of money (issue 45): a team, or the fleet, may have placement rank clusters by
// the expected useful FLOP/s divided by what a GPU-hour costs there, rather than by the FLOP/s
// alone (`placement: {objective: goodput_per_cost}`, a team's `objective:`; docs/scheduling.md).
// A cluster at 0.8x the MFU and half the price buys 1.6x the work per unit of money: it loses
// under `goodput` and wins under `goodput_per_cost`. Pure: the prices come in the views.

#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/health/goodput.h"
#include "scheduler/placement/plugin.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

// "goodput" | "goodput_per_cost", as the clusters file spells them.
std::string_view to_string(PlacementObjective objective);
// The objective of the job's team (its `objective:`), else the fleet's (`placement.objective`).
PlacementObjective objective_of(const SchedulingSpec& scheduling, const std::string& team);

// Each view's price per GPU-hour at now_ms (price_at of its spec's price). In a fleet with priced
// clusters, one without a price is judged at the dearest priced cluster's (price_assumed): never
// chosen for looking free. In a fleet without prices every view's is 0 (and goodput_per_cost
// ranks as goodput does).
void fill_prices(std::vector<ClusterView>& views, Millis now_ms);

// The useful FLOP a unit of money buys there: flops_per_s x 3600 / (gpus x price per GPU-hour);
// 0 for a price of 0 or no GPUs (what is free has no such figure).
double flop_per_money(double flops_per_s, int gpus, double price_per_gpu_hour);

// What a price of 0 counts as when goodput_per_cost divides by it: far below any real price,
// so a free cluster ranks above every priced one, and free ones among themselves by goodput.
inline constexpr double kFreePricePerGpuHour = 1e-9;

// What placement ranks the clusters by, next to each other: expected_work_per_s (goodput_score.h)
// under the goodput objective; that divided by each cluster's price per GPU-hour under
// goodput_per_cost (0 for an infeasible cluster).
std::vector<double> objective_work_per_s(const PlacementRequest& req,
                                         const std::vector<ClusterView>& clusters,
                                         const std::vector<bool>& feasible,
                                         const GoodputPriors& priors = {});

// Judged alone (GoodputScore::score): flops_per_s as is, or per unit of money.
double per_objective(const PlacementRequest& req, const ClusterView& cluster, double flops_per_s);

}  // namespace orch
