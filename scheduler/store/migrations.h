#pragma once
// Versioned schema migrations. The database records its version in PRAGMA user_version;
// opening a store applies every later migration in order, each in its own transaction.
// To change the schema, append a migration to migrations_later.cpp: never edit one that has
// shipped.

#include <string>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/store/sqlite_db.h"

namespace orch {

struct Migration {
  int version;
  std::string description;
  std::string sql;
};

// Every migration, in version order: migrations.cpp's first ones, then later_migrations().
const std::vector<Migration>& migrations();
// Versions 21 on (migrations_later.cpp).
std::vector<Migration> later_migrations();
int latest_schema_version();
Result<int> schema_version(Db& db);
// Applies migrations up to target (default: latest). Refuses a database newer than this build.
Result<void> migrate(Db& db, int target = -1);

}  // namespace orch
