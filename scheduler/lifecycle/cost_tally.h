#pragma once
// The cost tally's rows (issue 45, store/rows.h's CostTallyRow) from what attempts cost
// (attempt_cost.h): what the brain adds to the tally as an attempt ends, and what readers add on
// the fly for live attempts. Pure; no I/O.

#include <string>
#include <vector>

#include "scheduler/lifecycle/attempt_cost.h"
#include "scheduler/store/rows.h"

namespace orch {

// One row per kind with GPU-hours or money, in that month, team and the attempt's cluster.
std::vector<CostTallyRow> tally_rows(const AttemptCost& cost, const std::string& month,
                                     const std::string& team);

// What an ended attempt adds to the tally (Store::AttemptPricer): its split at `price` (null: the
// cluster has none, GPU-hours only), one share per UTC month it ran in (attempt_cost_within),
// team left empty. A live one
// adds nothing.
std::vector<CostTallyRow> ended_attempt_tally(const AttemptRow& attempt, const PriceSpec* price);

}  // namespace orch
