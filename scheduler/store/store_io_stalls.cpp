// I/O stalls (issue 43, docs/health.md "I/O stalls"): the saves agents saw run past their bound,
// one row per save, and the save times the launch's bound is computed from.
#include "scheduler/store/sqlite_db.h"
#include "scheduler/store/store.h"

namespace orch {

Result<bool> Store::add_io_stall(const IoStallRow& s) {
  if (auto ok = execute(db_,
                        "INSERT OR IGNORE INTO io_stalls(attempt_id, job_id, cluster, node, step, "
                        "path, fs, mount, running_s, after_s, at_ms) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        s.attempt_id, s.job_id, s.cluster, s.node, s.step, s.path, s.fs, s.mount,
                        s.running_s, s.after_s, s.at_ms);
      !ok) {
    return ok.error();
  }
  return db_.changes() > 0;
}

Result<std::vector<double>> StoreReader::job_save_times(JobId job) {
  return query(
      db_,
      "SELECT save_time_s FROM checkpoints WHERE job_id = ? AND save_time_s IS NOT NULL "
      "ORDER BY id DESC LIMIT 50",
      [](const Stmt& st) { return st.col_double(0); }, job);
}

Result<std::vector<std::string>> StoreReader::io_stall_clusters_since(Millis since_ms) {
  return query(
      db_, "SELECT cluster FROM io_stalls WHERE at_ms >= ? ORDER BY id",
      [](const Stmt& st) { return st.col_text(0); }, since_ms);
}

}  // namespace orch
