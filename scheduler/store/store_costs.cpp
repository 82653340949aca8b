// The running cost tally (issue 45, migration 36; rows.h's CostTallyRow): what ended attempts'
// GPU-hours cost by month, team, cluster and kind, kept as attempts end and as a next attempt
// records the steps its predecessor lost, in the transaction that writes the attempt.
#include <cmath>
#include <map>
#include <tuple>

#include "scheduler/store/store.h"
#include "scheduler/store/store_shared.h"

namespace orch {

namespace {

CostTallyRow read_cost(const Stmt& s) {
  CostTallyRow r;
  r.month = s.col_text(0);
  r.team = s.col_text(1);
  r.cluster = s.col_text(2);
  r.kind = s.col_text(3);
  r.gpu_hours = s.col_double(4);
  r.money = s.col_double(5);
  return r;
}

constexpr const char* kCostColumns = "month, team, cluster, kind, gpu_hours, money";

}  // namespace

Result<void> Store::add_costs(const std::vector<CostTallyRow>& rows) {
  for (const auto& r : rows) {
    if (r.gpu_hours == 0 && r.money == 0) continue;
    for (const std::string& month : {r.month, std::string(kCostAllTime)}) {
      if (auto ok = execute(db_,
                            "INSERT INTO cost_tally(month, team, cluster, kind, gpu_hours, money) "
                            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(month, team, cluster, kind) "
                            "DO UPDATE SET gpu_hours = gpu_hours + excluded.gpu_hours, "
                            "money = money + excluded.money",
                            month, r.team, r.cluster, r.kind, r.gpu_hours, r.money);
          !ok) {
        return ok;
      }
    }
  }
  return Ok{};
}

Result<void> Store::tally_attempt_cost(const std::optional<AttemptRow>& before,
                                       const std::optional<AttemptRow>& after) {
  if (!attempt_pricer_) return Ok{};
  // What an attempt adds to the tally is its price once it ended (live ones are the readers'):
  // the tally moves by what the new row adds less what the old one had added.
  using Key = std::tuple<std::string, std::string, std::string>;  // month, cluster, kind
  std::map<Key, std::pair<double, double>> delta;
  auto add = [&](const std::optional<AttemptRow>& a, double sign) {
    if (!a || a->state != AttemptState::exited || !a->ended_ms) return;
    for (const auto& c : attempt_pricer_(*a)) {
      auto& d = delta[Key{c.month, c.cluster, c.kind}];
      d.first += sign * c.gpu_hours;
      d.second += sign * c.money;
    }
  };
  add(before, -1.0);
  add(after, 1.0);
  std::vector<CostTallyRow> rows;
  for (const auto& [key, d] : delta) {
    if (std::abs(d.first) < 1e-12 && std::abs(d.second) < 1e-12) continue;
    rows.push_back(
        CostTallyRow{std::get<0>(key), "", std::get<1>(key), std::get<2>(key), d.first, d.second});
  }
  if (rows.empty()) return Ok{};
  const JobId job = after ? after->job_id : before->job_id;
  auto team = query_one(
      db_, "SELECT team FROM jobs WHERE id = ?", [](const Stmt& s) { return s.col_text(0); }, job);
  if (!team) return team.error();
  for (auto& r : rows) r.team = team->value_or("");
  return add_costs(rows);
}

Result<std::vector<CostTallyRow>> StoreReader::cost_tally(const std::string& from_month,
                                                          const std::string& to_month) {
  // Months sort as text ("2026-12" < "2027-01"), and kCostAllTime ("*") before every one.
  return query(db_,
               std::string("SELECT ") + kCostColumns +
                   " FROM cost_tally WHERE month >= ? AND month <= ? AND month != '*' "
                   "ORDER BY month, team, cluster, kind",
               read_cost, from_month, to_month);
}

Result<std::vector<CostTallyRow>> StoreReader::cost_totals() {
  return query(db_,
               std::string("SELECT ") + kCostColumns +
                   " FROM cost_tally WHERE month = '*' ORDER BY team, cluster, kind",
               read_cost);
}

Result<std::vector<JobId>> StoreReader::jobs_with_attempts_ended_since(Millis since_ms) {
  return query(
      db_,
      "SELECT DISTINCT job_id FROM attempts INDEXED BY attempts_ended WHERE ended_ms >= ? "
      "ORDER BY job_id",
      [](const Stmt& s) { return s.col_int(0); }, since_ms);
}

}  // namespace orch
