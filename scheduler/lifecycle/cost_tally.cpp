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
  // Each UTC month the attempt ran in gets its own share, so that a month's spend (budgets,
  // report cost --by team) holds what was spent in it, not what ended in it.
  std::vector<CostTallyRow> rows;
  const Millis end = *attempt.ended_ms;
  for (Millis m = month_start_ms(std::min(attempt.started_ms, end)); m <= end;
       m = next_month_start_ms(m)) {
    AttemptCost cost;
    cost.attempt = attempt.id;
    cost.job = attempt.job_id;
    cost.no = attempt.no;
    cost.cluster = attempt.cluster;
    cost.split = attempt_cost_within(attempt, price, end, m, next_month_start_ms(m));
    auto month_rows = tally_rows(cost, month_of(m), "");
    rows.insert(rows.end(), month_rows.begin(), month_rows.end());
  }
  return rows;
}

}  // namespace orch
