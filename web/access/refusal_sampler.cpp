#include "web/access/refusal_sampler.h"

namespace orch {

RefusalSampler::RefusalSampler(const Clock& clock, std::size_t max_keys, Millis window_ms)
    : clock_(clock), max_keys_(max_keys), window_ms_(window_ms) {}

AuditRow RefusalSampler::row_of(Entry& entry, Millis now) {
  AuditRow out = entry.latest;
  out.count = entry.pending;
  entry.pending = 0;
  entry.last_row_ms = now;
  return out;
}

std::optional<AuditRow> RefusalSampler::note(const std::string& key, AuditRow row) {
  const Millis now = clock_.now_ms();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find({key, row.status});
  if (it == entries_.end() && entries_.size() >= max_keys_) {
    if (row.remote == key) row.remote = kOthers;
    it = entries_.find({kOthers, row.status});
    if (it == entries_.end()) it = entries_.emplace(std::pair{kOthers, row.status}, Entry{}).first;
  }
  const bool fresh = it == entries_.end();
  if (fresh) it = entries_.emplace(std::pair{key, row.status}, Entry{}).first;
  Entry& entry = it->second;
  ++entry.pending;
  entry.latest = std::move(row);
  if (fresh || now - entry.last_row_ms >= window_ms_) return row_of(entry, now);
  return std::nullopt;
}

std::vector<AuditRow> RefusalSampler::due() {
  const Millis now = clock_.now_ms();
  std::vector<AuditRow> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& entry = it->second;
    if (now - entry.last_row_ms < window_ms_) {
      ++it;
    } else if (entry.pending > 0) {
      out.push_back(row_of(entry, now));
      ++it;
    } else {
      it = entries_.erase(it);  // quiet for a whole window: a new refusal starts afresh
    }
  }
  return out;
}

std::vector<AuditRow> RefusalSampler::flush() {
  const Millis now = clock_.now_ms();
  std::vector<AuditRow> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, entry] : entries_) {
    if (entry.pending > 0) out.push_back(row_of(entry, now));
  }
  return out;
}

std::size_t RefusalSampler::tracked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace orch
