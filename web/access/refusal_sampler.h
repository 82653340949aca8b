#pragma once
// Which refused requests become rows of the audit log when they come in floods: at most one
// row per key (a remote address, or a caller's user) and status per window (a minute), carrying
// how many were refused since that key's last row. A key's first refusal is written at once,
// so a single mistake shows in the audit as it happens; the rest of a flood is a count.
// Memory is bounded: at most max_keys (key, status) pairs are tracked, and refusals of any
// further key go to one shared key, "others". Safe to call from any thread (one mutex, held for a
// map lookup).

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/common/clock.h"
#include "web/access/access_store.h"

namespace orch {

class RefusalSampler {
 public:
  static constexpr std::size_t kDefaultMaxKeys = 1024;
  static constexpr Millis kDefaultWindowMs = 60'000;
  // The key refusals of untracked keys share once max_keys are tracked.
  static constexpr const char* kOthers = "others";

  explicit RefusalSampler(const Clock& clock, std::size_t max_keys = kDefaultMaxKeys,
                          Millis window_ms = kDefaultWindowMs);

  // Counts the refusal `row` (its status, the key's latest request). Returns the row to write
  // now, its count set to the refusals it stands for, or nullopt when it only counted. A key
  // past max_keys is counted as kOthers (and the row's remote says so when key is its remote).
  std::optional<AuditRow> note(const std::string& key, AuditRow row);
  // The rows of keys whose window ended with refusals not yet written; forgets keys idle for a
  // whole window. Cost: one pass over the tracked keys.
  std::vector<AuditRow> due();
  // Every count not yet written, as rows (when the server stops).
  std::vector<AuditRow> flush();
  std::size_t tracked() const;

 private:
  struct Entry {
    Millis last_row_ms = 0;
    std::int64_t pending = 0;  // refusals since the last row
    AuditRow latest;           // the newest refused request, for the next row
  };
  static AuditRow row_of(Entry& entry, Millis now);
  const Clock& clock_;
  const std::size_t max_keys_;
  const Millis window_ms_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, Entry> entries_;  // (key, status)
};

}  // namespace orch
