#pragma once
// The brain's part for team budgets (issue 45, docs/scheduling.md "Budgets"). Each team's
// month-to-date spend is the cost tally's month (Store::cost_tally, ended attempts) plus its live
// attempts priced from the month's start, or their start, to now (model/price.h's cost_of); the
// rule is placement/budget.h's. At 80% and 100% a `budget` event (a webhook notice) is written
// once per team, threshold and month (Store::add_budget_alert keeps which across restarts). Past
// 100% the team's jobs not yet started wait with the reason until the next month (a rule of
// JobHolds, job_holds.h, which wakes them at its start), or, with `over: <class>`, run at that
// class's priority; running jobs go on. The spend is read at most once a minute (on the tick, or
// when a job asks first).

#include <map>
#include <optional>
#include <string>

#include "scheduler/brain/brain_core.h"
#include "scheduler/placement/budget.h"

namespace orch {

class BudgetKeeper : BrainPart {
 public:
  explicit BudgetKeeper(BrainCore& core) : BrainPart(core) {}

  // The spend is read again this often (and at the first event of a month).
  static constexpr Millis kSweepEveryMs = 60'000;

  // The tick: when due, each budgeted team's spend and verdict and the thresholds announced.
  Result<void> sweep();

  // Why a job waits for its team's budget (JobHolds' rule): a job not yet started of a team past
  // its budget with `over: hold`; nullopt otherwise. Its holds end at the next month's start.
  Result<std::optional<std::string>> hold_of(const JobRow& job);
  // With `over: <class>`: a job not yet started of a team past its budget gets that class's
  // priority when its own is higher (written, with the reason and a budget-lowered event).
  Result<void> lower_priority(JobRow& job);

  // The team's verdict as of the latest sweep (not budgeted: a verdict with budgeted false).
  BudgetVerdict verdict_of(const std::string& team) const;

 private:
  Result<std::map<std::string, BudgetSpend>> month_spend(Millis now);
  Result<void> announce(const std::string& team, const BudgetVerdict& verdict, Millis now);
  const TeamQuota::Budget* budget_of(const std::string& team) const;
  std::string currency() const;

  std::map<std::string, BudgetVerdict> verdicts_;  // by team, budgeted teams only
  std::optional<Millis> swept_at_;
  std::string swept_month_;
};

}  // namespace orch
