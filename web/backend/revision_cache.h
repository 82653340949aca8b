#pragma once
// What a read rendered of a job, kept under the job's id and revision. The database moves a
// job's revision on every write to the job, its attempts or its checkpoints (schema v8), so a
// value found at the revision a request just read is exactly what rendering again would give,
// and a read costs what changed, not what it shows. Callers put in only what does not depend
// on the clock (a job with a live attempt has an ETTR that grows with time).
// Thread-safe; bounded (when full it starts again empty).

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "scheduler/store/rows.h"

namespace orch {

template <typename Value>
class RevisionCache {
 public:
  explicit RevisionCache(std::size_t capacity = 20000) : capacity_(capacity) {}

  // The value put at exactly this revision, if held.
  std::optional<Value> find(const JobKey& key) const {
    std::lock_guard lock(mu_);
    auto it = values_.find(key.id);
    if (it == values_.end() || it->second.first != key.revision) return std::nullopt;
    return it->second.second;
  }

  void put(const JobKey& key, Value value) {
    std::lock_guard lock(mu_);
    if (values_.size() >= capacity_ && !values_.contains(key.id)) values_.clear();
    values_[key.id] = {key.revision, std::move(value)};
  }

  std::size_t size() const {
    std::lock_guard lock(mu_);
    return values_.size();
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<JobId, std::pair<std::int64_t, Value>> values_;
  std::size_t capacity_;
};

}  // namespace orch
