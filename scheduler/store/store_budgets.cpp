// Team budgets (issue 45, migration 37, docs/scheduling.md "Budgets"): which of a team's 80% and
// 100% thresholds were announced in a month, so that each `budget` webhook fires once per team,
// threshold and month across restarts; and a job's priority lowered while its team is past its
// budget with `over: <class>`.
#include "scheduler/model/json_text.h"
#include "scheduler/spec/job_spec_json.h"
#include "scheduler/store/sqlite_db.h"
#include "scheduler/store/store.h"
#include "scheduler/store/store_shared.h"

namespace orch {

Result<bool> Store::add_budget_alert(const std::string& month, const std::string& team,
                                     int threshold, Millis at_ms) {
  if (auto ok = execute(db_,
                        "INSERT OR IGNORE INTO budget_alerts(month, team, threshold, at_ms) "
                        "VALUES (?, ?, ?, ?)",
                        month, team, threshold, at_ms);
      !ok) {
    return ok.error();
  }
  return db_.changes() > 0;
}

Result<void> Store::set_job_priority(JobRow& row, int priority, Millis now) {
  // The spec is written as insert_job writes it, and cached, so placing it next parses nothing.
  row.spec.priority = priority;
  std::string text = json_text(job_spec_to_json(row.spec));
  if (auto ok = execute(db_, "UPDATE jobs SET spec = ? WHERE id = ?", text, row.id); !ok) return ok;
  if (spec_cache_.size() >= 16384) spec_cache_.clear();
  spec_cache_[row.id] = {std::move(text), row.spec};
  // The queue is keyed by priority: the row's write tells it (job_changes).
  return update_job(row, now);
}

Result<std::vector<std::pair<std::string, int>>> StoreReader::budget_alerts(
    const std::string& month) {
  return query(
      db_, "SELECT team, threshold FROM budget_alerts WHERE month = ? ORDER BY team, threshold",
      [](const Stmt& s) { return std::pair(s.col_text(0), static_cast<int>(s.col_int(1))); },
      month);
}

}  // namespace orch
