#pragma once
// What the push route (push_routes.cpp) asks of the server: a store of the records an attempt's
// agents push home (issue 44, docs/rest-api.md "Records pushed home"). The server's is
// server/pushed_record_store.h; the route has checked the body's shape, the guard the credential.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/common/result.h"

namespace orch {

// One record as the agent sent it: its event-file line plus "seq".
struct PushRecord {
  std::int64_t seq = 0;  // from 1, strictly increasing per task
  std::string event;     // "start", "heartbeat", "progress", "checkpoint", "exit", ...
  std::int64_t at_ms = 0;
  std::string json;  // the whole record, compact
};

// One request: some of one task's records, oldest first.
struct PushBatch {
  std::string token;  // the attempt's launch token
  int rank = 0;       // the task's rank in the gang
  std::string node;   // the node the agent runs on; "" when it did not say
  std::vector<PushRecord> records;
};

struct PushAnswer {
  // The attempt has ended or was never known: the agent stops pushing (410).
  bool gone = false;
  std::string why;            // when gone
  std::int64_t stored = 0;    // records of the batch newly stored (those above last_seq before)
  std::int64_t last_seq = 0;  // the highest seq held for the task after the batch
};

class PushApi {
 public:
  virtual ~PushApi() = default;
  // Stores the records of the batch above the task's last_seq (a retried batch is stored once).
  virtual Result<PushAnswer> push(const PushBatch& batch) = 0;
};

// A request holds at most this many records and bytes (413 beyond).
inline constexpr std::size_t kMaxPushRecords = 256;
inline constexpr std::size_t kMaxPushBytes = 1 << 20;

}  // namespace orch
