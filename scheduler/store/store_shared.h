#pragma once
// What the store_*.cpp files share among themselves; not part of the Store's interface.

#include <string>
#include <vector>

#include "scheduler/store/rows.h"
#include "scheduler/store/sqlite_db.h"

namespace orch {

// An attempt row as SELECT attempt_columns() reads it (store_attempts.cpp).
AttemptRow read_attempt_row(const Stmt& st);
const char* attempt_columns();

// A list of ids as one bound value: "[1,2,3]" for json_each, so one prepared statement serves
// lists of any length.
inline std::string id_array(const std::vector<std::int64_t>& ids) {
  std::string out = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out + "]";
}

}  // namespace orch
