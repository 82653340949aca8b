// Team budgets in the brain (issue 45): spend, verdicts, the `budget` notices, jobs held.
#include "scheduler/brain/budget_keeper.h"

#include <algorithm>
#include <unordered_map>

#include "scheduler/model/price.h"

namespace orch {

const TeamQuota::Budget* BudgetKeeper::budget_of(const std::string& team) const {
  auto it = core_.scheduling.teams.find(team);
  if (it == core_.scheduling.teams.end() || !it->second.budget.configured) return nullptr;
  return &it->second.budget;
}

std::string BudgetKeeper::currency() const {
  for (const auto& c : clusters_) {
    if (c.price.configured) return c.price.currency;
  }
  return "USD";
}

BudgetVerdict BudgetKeeper::verdict_of(const std::string& team) const {
  auto it = verdicts_.find(team);
  return it == verdicts_.end() ? BudgetVerdict{} : it->second;
}

Result<std::map<std::string, BudgetSpend>> BudgetKeeper::month_spend(Millis now) {
  std::map<std::string, BudgetSpend> spend;
  const std::string month = month_of(now);
  auto tally = store_.cost_tally(month, month);
  if (!tally) return tally.error();
  for (const auto& row : *tally) {
    spend[row.team].money += row.money;
    spend[row.team].gpu_hours += row.gpu_hours;
  }
  // Live attempts are not in the tally until they end: their time in this month so far.
  auto uses = store_.team_uses();
  if (!uses) return uses.error();
  std::unordered_map<AttemptId, std::string> team_of;
  for (auto& u : *uses) team_of.emplace(u.attempt, std::move(u.team));
  auto live = store_.live_attempts(std::nullopt);
  if (!live) return live.error();
  const Millis month_start = month_start_ms(now);
  for (const auto& a : *live) {
    auto team = team_of.find(a.id);
    if (team == team_of.end() || budget_of(team->second) == nullptr) continue;
    const Millis from = std::max(a.started_ms, month_start);
    if (now <= from) continue;
    BudgetSpend& s = spend[team->second];
    s.gpu_hours += a.gpus * static_cast<double>(now - from) / 3'600'000.0;
    if (const ClusterSpec* c = cluster_spec(a.cluster))
      s.money += cost_of(c->price, from, now, a.gpus);
  }
  return spend;
}

Result<void> BudgetKeeper::sweep() {
  const Millis now = clock_.now_ms();
  const std::string month = month_of(now);
  const bool new_month = month != swept_month_;
  if (!new_month && swept_at_ && now - *swept_at_ < kSweepEveryMs) return Ok{};
  swept_at_ = now;
  swept_month_ = month;
  verdicts_.clear();
  bool any = false;
  for (const auto& [team, quota] : core_.scheduling.teams) any = any || quota.budget.configured;
  if (!any) return Ok{};
  auto spend = month_spend(now);
  if (!spend) return spend.error();
  for (const auto& [team, quota] : core_.scheduling.teams) {
    if (!quota.budget.configured) continue;
    const BudgetVerdict verdict = budget_verdict(quota.budget, (*spend)[team]);
    verdicts_[team] = verdict;
    if (auto r = announce(team, verdict, now); !r) return r;
  }
  return Ok{};
}

Result<void> BudgetKeeper::announce(const std::string& team, const BudgetVerdict& verdict,
                                    Millis now) {
  for (int threshold : thresholds_to_announce(verdict, {})) {
    auto added = store_.add_budget_alert(month_of(now), team, threshold, now);
    if (!added) return added.error();
    if (!*added) continue;  // announced already this month
    if (auto r = store_.add_event(std::nullopt, std::nullopt, now, "budget",
                                  budget_notice(team, verdict, threshold, currency(), now));
        !r) {
      return r;
    }
  }
  return Ok{};
}

Result<std::optional<std::string>> BudgetKeeper::hold_of(const JobRow& job) {
  // Running jobs go on; a job that started before (resuming, staging) is not new work.
  if (job.state != JobState::pending || budget_of(job.spec.team) == nullptr) {
    return std::optional<std::string>();
  }
  if (auto r = sweep(); !r) return r.error();
  const BudgetVerdict verdict = verdict_of(job.spec.team);
  if (!verdict.over() || verdict.run_at) return std::optional<std::string>();
  return std::optional<std::string>(
      budget_reason(job.spec.team, verdict, currency(), clock_.now_ms()));
}

Result<void> BudgetKeeper::lower_priority(JobRow& job) {
  if (job.state != JobState::pending || budget_of(job.spec.team) == nullptr) return Ok{};
  if (auto r = sweep(); !r) return r;
  const BudgetVerdict verdict = verdict_of(job.spec.team);
  if (!verdict.over() || !verdict.run_at) return Ok{};
  auto cls = core_.scheduling.priority_classes.find(*verdict.run_at);
  if (cls == core_.scheduling.priority_classes.end() || job.spec.priority <= cls->second) {
    return Ok{};
  }
  const Millis now = clock_.now_ms();
  job.reason = budget_reason(job.spec.team, verdict, currency(), now, cls->second);
  if (auto r = store_.set_job_priority(job, cls->second, now); !r) return r;
  return event(job.id, std::nullopt, "budget-lowered", job.reason);
}

}  // namespace orch
