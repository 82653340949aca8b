#pragma once
// Team budgets (issue 45, docs/scheduling.md "Budgets"), without I/O: a team's month-to-date
// spend against its monthly budget (`teams: {vision: {budget: {money: 1000, over: hold}}}`),
// which of the 80% and 100% thresholds it has crossed, what its jobs not yet started do past
// 100% (wait, or run at a lower priority class), and the words for the job's reason and the
// `budget` webhook. The brain's BudgetKeeper (scheduler/brain/budget_keeper.h) feeds it the
// spend and keeps which thresholds were announced.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

// What a team spent in one UTC calendar month: money in the fleet's currency and GPU-hours.
struct BudgetSpend {
  double money = 0;
  double gpu_hours = 0;
};

struct BudgetVerdict {
  bool budgeted = false;  // the team has a budget (TeamQuota::Budget::configured)
  bool in_money = true;   // the budget is money (else GPU-hours)
  double used = 0;        // in the budget's unit
  double limit = 0;
  int crossed = 0;  // the highest threshold reached: 0, 80 or 100 (percent)
  // Past 100% with `over: <class>`: that class (the team's new jobs run at its value); nullopt
  // with `over: hold` (they wait) or while under.
  std::optional<std::string> run_at;
  bool over() const { return crossed >= 100; }
};

// The thresholds a budget announces, in percent.
inline constexpr int kBudgetThresholds[] = {80, 100};

// The verdict of a spend against a budget. A limit of 0 (or less) is spent at once.
BudgetVerdict budget_verdict(const TeamQuota::Budget& budget, const BudgetSpend& spend);

// The thresholds the verdict has reached that were not announced yet this month, lowest first
// (a spend that jumps past both announces both).
std::vector<int> thresholds_to_announce(const BudgetVerdict& verdict,
                                        const std::set<int>& announced);

// "1,012.50 USD" (money, two decimals) or "20,000.0 GPU-hours".
std::string budget_amount(const BudgetVerdict& verdict, double amount, const std::string& currency);

// "team vision has spent 1,012.50 of its 1,000.00 USD budget for 2026-12"
std::string budget_spent_words(const std::string& team, const BudgetVerdict& verdict,
                               const std::string& currency, Millis now);

// Why a job of a team past its budget waits or runs lower: "...; new jobs wait until 2027-01-01
// or a larger budget", or "...; its new jobs run at priority class low (10) until 2027-01-01".
std::string budget_reason(const std::string& team, const BudgetVerdict& verdict,
                          const std::string& currency, Millis now, int run_at_value = 0);

// The `budget` webhook's message when a threshold is crossed: "team vision has spent 812.00 of
// its 1,000.00 USD budget for 2026-12: past 80%".
std::string budget_notice(const std::string& team, const BudgetVerdict& verdict, int threshold,
                          const std::string& currency, Millis now);

// "2027-01-01": the first day of the month after the one `now` is in (UTC).
std::string next_month_day(Millis now);

}  // namespace orch
