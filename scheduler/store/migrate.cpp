// Bringing a state database to the schema this build knows (migrations.h): its version read,
// each migration of migrations.cpp's table it lacks applied in a transaction of its own.
#include "scheduler/store/migrations.h"

namespace orch {

int latest_schema_version() {
  return migrations().back().version;
}

Result<int> schema_version(Db& db) {
  auto st = db.prepare("PRAGMA user_version");
  if (!st) return st.error();
  auto row = st->step();
  if (!row) return row.error();
  return static_cast<int>(st->col_int(0));
}

Result<void> migrate(Db& db, int target) {
  if (target < 0) target = latest_schema_version();
  auto current = schema_version(db);
  if (!current) return current.error();
  if (*current > latest_schema_version()) {
    return make_error(ErrorKind::invalid,
                      "state database has schema version " + std::to_string(*current) +
                          ", newer than this build understands (" +
                          std::to_string(latest_schema_version()) +
                          "); upgrade orchestrate or use another --state directory");
  }
  for (const auto& m : migrations()) {
    if (m.version <= *current || m.version > target) continue;
    std::string sql = "BEGIN IMMEDIATE;\n" + m.sql +
                      "\nPRAGMA user_version = " + std::to_string(m.version) + ";\nCOMMIT;";
    if (auto r = db.exec(sql); !r) {
      (void)db.exec("ROLLBACK");
      return make_error(ErrorKind::io, "migration to schema version " + std::to_string(m.version) +
                                           " (" + m.description + ") failed: " + r.error().message);
    }
  }
  return Ok{};
}

}  // namespace orch
