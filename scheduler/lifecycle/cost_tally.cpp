#include "scheduler/lifecycle/cost_tally.h"

namespace orch {

std::vector<CostTallyRow> tally_rows(const AttemptCost& cost, const std::string& month,
                                     const std::string& team) {
  std::vector<CostTallyRow> rows;
  for (std::size_t k = 0; k < kCostKinds; ++k) {
    const double gpu_hours = cost.split.gpu_hours[k];
    const double money = cost.split.money[k];
    if (gpu_hours == 0 && money == 0) continue;
    rows.push_back(CostTallyRow{month, team, cost.cluster, cost_kind_name(static_cast<CostKind>(k)),
                                gpu_hours, money});
  }
  return rows;
}

std::vector<CostTallyRow> ended_attempt_tally(const AttemptRow& attempt, const PriceSpec* price) {
  if (attempt.state != AttemptState::exited || !attempt.ended_ms) return {};
  auto costs = attempt_costs(
      {attempt}, [price](const std::string&) { return price; }, *attempt.ended_ms);
  return tally_rows(costs.front(), month_of(*attempt.ended_ms), "");
}

}  // namespace orch
