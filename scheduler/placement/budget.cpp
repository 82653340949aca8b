#include "scheduler/placement/budget.h"

#include <cmath>
#include <cstdio>

#include "scheduler/model/price.h"

namespace orch {

namespace {

// 1012.5 -> "1,012.50" (decimals 2): thousands grouped, as people read money.
std::string grouped(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(value));
  std::string digits(buf);
  const std::size_t dot = digits.find('.');
  std::string whole = digits.substr(0, dot);
  const std::string fraction = dot == std::string::npos ? "" : digits.substr(dot);
  std::string out;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) out += ',';
    out += whole[i];
  }
  return (value < 0 && std::round(value * std::pow(10, decimals)) != 0 ? "-" : "") + out + fraction;
}

}  // namespace

BudgetVerdict budget_verdict(const TeamQuota::Budget& budget, const BudgetSpend& spend) {
  BudgetVerdict v;
  if (!budget.configured || (!budget.money && !budget.gpu_hours)) return v;
  v.budgeted = true;
  v.in_money = budget.money.has_value();
  v.limit = v.in_money ? *budget.money : *budget.gpu_hours;
  v.used = v.in_money ? spend.money : spend.gpu_hours;
  for (int threshold : kBudgetThresholds) {
    if (v.used >= v.limit * threshold / 100.0) v.crossed = threshold;
  }
  if (v.over() && budget.over != "hold") v.run_at = budget.over;
  return v;
}

std::vector<int> thresholds_to_announce(const BudgetVerdict& verdict,
                                        const std::set<int>& announced) {
  std::vector<int> out;
  if (!verdict.budgeted) return out;
  for (int threshold : kBudgetThresholds) {
    if (threshold <= verdict.crossed && announced.count(threshold) == 0) out.push_back(threshold);
  }
  return out;
}

std::string budget_amount(const BudgetVerdict& verdict, double amount,
                          const std::string& currency) {
  if (verdict.in_money) return grouped(amount, 2) + " " + currency;
  return grouped(amount, 1) + " GPU-hours";
}

std::string budget_spent_words(const std::string& team, const BudgetVerdict& verdict,
                               const std::string& currency, Millis now) {
  // "of its 1,000.00 USD budget": the amount spent carries no unit of its own.
  const std::string limit = budget_amount(verdict, verdict.limit, currency);
  const std::string used = verdict.in_money ? grouped(verdict.used, 2) : grouped(verdict.used, 1);
  return "team " + team + " has spent " + used + " of its " + limit + " budget for " +
         month_of(now);
}

std::string budget_reason(const std::string& team, const BudgetVerdict& verdict,
                          const std::string& currency, Millis now, int run_at_value) {
  const std::string spent = budget_spent_words(team, verdict, currency, now);
  if (verdict.run_at) {
    return spent + "; its new jobs run at priority class " + *verdict.run_at + " (" +
           std::to_string(run_at_value) + ") until " + next_month_day(now);
  }
  return spent + "; new jobs wait until " + next_month_day(now) + " or a larger budget";
}

std::string budget_notice(const std::string& team, const BudgetVerdict& verdict, int threshold,
                          const std::string& currency, Millis now) {
  return budget_spent_words(team, verdict, currency, now) + ": past " + std::to_string(threshold) +
         "%";
}

std::string next_month_day(Millis now) {
  return month_of(next_month_start_ms(now)) + "-01";
}

}  // namespace orch
