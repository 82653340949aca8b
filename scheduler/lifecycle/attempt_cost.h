#pragma once
// What each attempt's GPU-hours bought (issue 45), from the same accounting as ETTR
// (job_stats.h): an attempt held `gpus` GPUs from started_ms to ended_ms (or now), and that
// time splits into
//   queued:  started -> running (or its end when it never ran): GPUs held, nothing runs
//   restart: running -> its first progress line (loading, start-up); all of it when none came
//            (but an attempt that succeeded without a progress line kept its work: useful)
//   redone:  its steps_lost (steps the next attempt made again) x its step time
//   failed:  the rest of an attempt that kept no step (it ended before any step it made was kept)
//   useful:  the rest: steps kept
// and each part is priced by cost_of over its own span of time (model/price.h). Pure; no I/O.

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/model/price.h"
#include "scheduler/store/rows.h"

namespace orch {

enum class CostKind { useful = 0, redone, restart, queued, failed };
inline constexpr std::size_t kCostKinds = 5;
const char* cost_kind_name(CostKind kind);  // "useful", "redone", ...

struct CostSplit {
  std::array<double, kCostKinds> gpu_hours{};
  std::array<double, kCostKinds> money{};
  double gpu_hours_total() const;
  double money_total() const;
  double lost_money() const;  // everything but useful
  double lost_gpu_hours() const;
  void add(const CostSplit& other);
};

struct AttemptCost {
  AttemptId attempt = 0;
  JobId job = 0;
  int no = 0;
  std::string cluster;
  CostSplit split;
};

// One entry per attempt of one job (attempts in `no` order, as Store::attempts_of gives them);
// `price_of` the price of the attempt's cluster (a cluster unknown now: no price, 0 money).
// Attempts that never launched (not_launched) cost nothing.
std::vector<AttemptCost> attempt_costs(
    const std::vector<AttemptRow>& attempts,
    const std::function<const PriceSpec*(const std::string&)>& price_of, Millis now);

// The same split restricted to [from_ms, to_ms): each part counts only the time it spent inside
// (a month's share of an attempt that ran across its edge, for the tally and budgets).
CostSplit attempt_cost_within(const AttemptRow& attempt, const PriceSpec* price, Millis now,
                              Millis from_ms, Millis to_ms);

}  // namespace orch
