// What GPU-hours cost (issue 45, docs/rest-api.md "Cost"): GET /reports/cost by job, team,
// cluster or vendor, a job's cost, the scorecard's money and the /metrics cost families. Ended
// attempts come from the store's running tally (migration 36), live ones are priced here, now.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "scheduler/lifecycle/cost_tally.h"
#include "web/backend/cost_values.h"
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using nlohmann::json;

json parts_json(const std::array<double, kCostKinds>& parts, double total, double lost) {
  json out = {{"total", total}, {"useful", parts[0]}, {"lost", lost}};
  for (std::size_t k = 1; k < kCostKinds; ++k) {
    out[cost_kind_name(static_cast<CostKind>(k))] = parts[k];
  }
  return out;
}

void add_row(CostSplit& split, const CostTallyRow& r) {
  const std::size_t k = cost_kind_index(r.kind);
  if (k >= kCostKinds) return;
  split.gpu_hours[k] += r.gpu_hours;
  split.money[k] += r.money;
}

// "2026-12-01" or "2026-12" (a UTC day or month): its first millisecond; nullopt when it is
// neither.
std::optional<Millis> parse_since(const std::string& text) {
  unsigned y = 0, m = 0, d = 1;
  char tail = 0;
  const int n = std::sscanf(text.c_str(), "%4u-%2u-%2u%c", &y, &m, &d, &tail);
  const bool month_only = n == 2 && text.size() == 7;
  const bool day = n == 3 && text.size() == 10;
  if (!month_only && !day) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year{static_cast<int>(y)},
                                        std::chrono::month{m}, std::chrono::day{d}};
  if (!ymd.ok() || y < 1970) return std::nullopt;
  return static_cast<Millis>(std::chrono::sys_days{ymd}.time_since_epoch().count()) * 86'400'000;
}

}  // namespace

json cost_split_json(const CostSplit& split) {
  return {
      {"gpu_hours", parts_json(split.gpu_hours, split.gpu_hours_total(), split.lost_gpu_hours())},
      {"money", parts_json(split.money, split.money_total(), split.lost_money())}};
}

std::size_t cost_kind_index(const std::string& name) {
  for (std::size_t k = 0; k < kCostKinds; ++k) {
    if (name == cost_kind_name(static_cast<CostKind>(k))) return k;
  }
  return kCostKinds;
}

std::function<const PriceSpec*(const std::string&)> SchedulerBackend::price_lookup() const {
  return [this](const std::string& cluster) -> const PriceSpec* {
    const ClusterSpec* spec = spec_of(cluster);
    return spec != nullptr && spec->price.configured ? &spec->price : nullptr;
  };
}

std::string SchedulerBackend::currency() const {
  for (const auto& name : clusters_.names()) {
    const ClusterSpec* c = clusters_.find(name);
    if (c != nullptr && c->price.configured) return c->price.currency;
  }
  return "";
}

Result<std::vector<CostTallyRow>> SchedulerBackend::live_cost_rows(StoreReader& reader,
                                                                   Millis now) const {
  auto live = reader.live_attempts(std::nullopt);
  if (!live) return live.error();
  std::set<JobId> ids;
  for (const auto& a : *live) ids.insert(a.job_id);
  auto jobs = reader.job_listings(std::vector<JobId>(ids.begin(), ids.end()));
  if (!jobs) return jobs.error();
  std::map<JobId, std::string> team;
  for (const auto& j : *jobs) team[j.id] = j.spec.team;
  std::vector<CostTallyRow> rows;
  const std::string month = month_of(now);
  for (const auto& cost : attempt_costs(*live, price_lookup(), now)) {
    for (auto& r : tally_rows(cost, month, team[cost.job])) rows.push_back(std::move(r));
  }
  return rows;
}

Result<std::vector<AttemptCost>> SchedulerBackend::attempt_costs_since(StoreReader& reader,
                                                                       Millis since_ms,
                                                                       Millis now) const {
  auto ended = reader.jobs_with_attempts_ended_since(since_ms);
  if (!ended) return ended.error();
  auto live = reader.live_attempts(std::nullopt);
  if (!live) return live.error();
  std::set<JobId> ids(ended->begin(), ended->end());
  for (const auto& a : *live) ids.insert(a.job_id);
  auto attempts = reader.attempts_of_jobs(std::vector<JobId>(ids.begin(), ids.end()));
  if (!attempts) return attempts.error();
  std::vector<AttemptCost> out;
  for (const auto& [job, of_job] : *attempts) {
    std::vector<AttemptRow> counted;
    for (const auto& a : of_job) {
      if (!a.ended_ms || *a.ended_ms >= since_ms) counted.push_back(a);
    }
    for (auto& c : attempt_costs(counted, price_lookup(), now)) out.push_back(std::move(c));
  }
  return out;
}

Result<nlohmann::json> SchedulerBackend::cost_report(const CostQuery& query) {
  static const std::set<std::string> kBy{"job", "team", "cluster", "vendor"};
  if (!kBy.count(query.by)) {
    return make_error(ErrorKind::invalid,
                      "by must be job, team, cluster or vendor, got \"" + query.by + "\"");
  }
  const Millis now = clock_.now_ms();
  Millis since = month_start_ms(now);
  if (!query.since.empty()) {
    auto parsed = parse_since(query.since);
    if (!parsed) {
      return make_error(ErrorKind::invalid,
                        "since must be a UTC date such as 2026-12-01 or a "
                        "month such as 2026-12, got \"" +
                            query.since + "\"");
    }
    since = *parsed;
  }
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  std::map<std::string, CostSplit> by_key;
  std::map<std::string, json> labels;
  Millis counted_from = since;
  if (query.by == "job") {
    auto costs = attempt_costs_since(reader, since, now);
    if (!costs) return costs.error();
    std::map<JobId, CostSplit> of_job;
    for (const auto& c : *costs) of_job[c.job].add(c.split);
    std::vector<JobId> ids;
    for (const auto& [id, split] : of_job) ids.push_back(id);
    auto jobs = reader.job_listings(ids);
    if (!jobs) return jobs.error();
    for (const auto& j : *jobs) {
      const std::string key = std::to_string(j.id);
      by_key[key] = of_job[j.id];
      labels[key] = {{"job", j.id}, {"name", j.name}, {"team", j.spec.team}};
    }
  } else {
    // The tally counts whole UTC months: from the month `since` falls in.
    counted_from = month_start_ms(since);
    auto rows = reader.cost_tally(month_of(since), month_of(now));
    if (!rows) return rows.error();
    auto live = live_cost_rows(reader, now);
    if (!live) return live.error();
    rows->insert(rows->end(), live->begin(), live->end());
    for (const auto& r : *rows) {
      std::string key = query.by == "team" ? r.team : r.cluster;
      if (query.by == "vendor") {
        const ClusterSpec* spec = spec_of(r.cluster);
        key = spec != nullptr ? spec->vendor_or_name() : r.cluster;
      }
      add_row(by_key[key], r);
    }
  }
  return cost_answer(query.by, by_key, labels, counted_from, now);
}

json SchedulerBackend::cost_answer(const std::string& by,
                                   const std::map<std::string, CostSplit>& by_key,
                                   const std::map<std::string, json>& labels, Millis from,
                                   Millis now) const {
  // Contracts (cluster and vendor): what the reservation costs over the span whether used or
  // not, and what the attempts did not use of it (idle).
  std::map<std::string, double> committed;
  if (by == "cluster" || by == "vendor") {
    for (const auto& c : clusters_.snapshot()) {
      const double money = committed_cost(c.price, c.total_gpus(), from, now);
      if (c.price.contract_start_ms && c.price.contract_end_ms) {
        committed[by == "cluster" ? c.name : c.vendor_or_name()] += money;
      }
    }
  }
  CostSplit total;
  json rows = json::array();
  std::set<std::string> keys;
  for (const auto& [key, split] : by_key) keys.insert(key);
  for (const auto& [key, money] : committed) keys.insert(key);
  for (const auto& key : keys) {
    const auto it = by_key.find(key);
    const CostSplit split = it == by_key.end() ? CostSplit{} : it->second;
    json row = {{"key", key}};
    if (auto l = labels.find(key); l != labels.end()) row.update(l->second);
    row.update(cost_split_json(split));
    if (auto c = committed.find(key); c != committed.end()) {
      row["committed"] = c->second;
      row["idle"] = std::max(0.0, c->second - split.money_total());
    } else {
      row["committed"] = nullptr;
      row["idle"] = nullptr;
    }
    total.add(split);
    rows.push_back(std::move(row));
  }
  return json{{"by", by},      {"from_ms", from},
              {"now_ms", now}, {"currency", currency()},
              {"rows", rows},  {"total", cost_split_json(total)}};
}

Result<std::vector<CostTallyRow>> SchedulerBackend::cost_totals_now(StoreReader& reader) const {
  auto rows = reader.cost_totals();
  if (!rows) return rows.error();
  auto live = live_cost_rows(reader, clock_.now_ms());
  if (!live) return live.error();
  // The live attempts' figures join their (team, cluster, kind) totals.
  std::map<std::tuple<std::string, std::string, std::string>, CostTallyRow> merged;
  for (const auto* list : {&*rows, &*live}) {
    for (const auto& r : *list) {
      auto& m = merged[{r.team, r.cluster, r.kind}];
      if (m.kind.empty()) m = CostTallyRow{kCostAllTime, r.team, r.cluster, r.kind, 0, 0};
      m.gpu_hours += r.gpu_hours;
      m.money += r.money;
    }
  }
  std::vector<CostTallyRow> out;
  for (auto& [key, r] : merged) out.push_back(std::move(r));
  return out;
}

json SchedulerBackend::card_cost(const std::vector<std::string>& clusters,
                                 const std::map<std::string, CostSplit>& by_cluster) const {
  CostSplit split;
  for (const auto& c : clusters) {
    if (auto it = by_cluster.find(c); it != by_cluster.end()) split.add(it->second);
  }
  const double money = split.money_total();
  const double useful_h = split.gpu_hours[static_cast<std::size_t>(CostKind::useful)];
  json out = cost_split_json(split);
  out["currency"] = currency();
  // What 1,000 units of money bought: useful GPU-hours; null where nothing was paid.
  out["useful_gpu_hours_per_1k"] = money > 0 ? json(useful_h / money * 1000.0) : json(nullptr);
  return out;
}

}  // namespace orch
