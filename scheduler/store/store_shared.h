#pragma once
// What the store_*.cpp files share among themselves; not part of the Store's interface.

#include <string>
#include <vector>

#include "scheduler/store/rows.h"
#include "scheduler/store/sqlite_db.h"

namespace orch {

// The ids of a job's checkpoints with a copy that still exists (neither deleted nor missing),
// one bound value: the job. Read from migration 23's index of live copies (CROSS JOIN keeps
// it the outer loop), so it costs the copies kept, not every checkpoint the job ever saved.
inline constexpr const char* kCheckpointsWithCopies =
    "SELECT r.checkpoint_id FROM replicas r INDEXED BY replicas_live CROSS JOIN checkpoints c "
    "ON c.id = r.checkpoint_id WHERE r.checkpoint_id IS NOT NULL "
    "AND r.state NOT IN ('deleted', 'missing') AND c.job_id = ?";

// A list of ids as one bound value: "[1,2,3]" for json_each, so one prepared statement serves
// lists of any length.
inline std::string id_array(const std::vector<std::int64_t>& ids) {
  std::string out = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out + "]";
}

}  // namespace orch
