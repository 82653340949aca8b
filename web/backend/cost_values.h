#pragma once
// What the backend says of cost (issue 45): a CostSplit as JSON, the same shape wherever it is
// served (the cost report's rows, a job's `cost`, the scorecard's figures).

#include <string>

#include <nlohmann/json.hpp>

#include "scheduler/lifecycle/attempt_cost.h"

namespace orch {

// {"gpu_hours": {...}, "money": {...}}, each {"total", "useful", "lost", "redone", "restart",
// "queued", "failed"}: lost is everything but useful.
nlohmann::json cost_split_json(const CostSplit& split);

// The index of a kind by its name (cost_kind_name), kCostKinds when unknown.
std::size_t cost_kind_index(const std::string& name);

}  // namespace orch
