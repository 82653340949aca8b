#include "scheduler/brain/waiting_queue.h"

namespace orch {

WaitingQueue::Key WaitingQueue::key_of(const JobChange& job) {
  return {-job.priority, job.state == JobState::resuming ? 0 : 1, job.id};
}

void WaitingQueue::reset(const std::vector<JobChange>& waiting) {
  order_.clear();
  unblocked_.clear();
  entries_.clear();
  swept_version_.reset();
  for (const auto& job : waiting) apply(job);
}

void WaitingQueue::apply(const JobChange& change) {
  auto it = entries_.find(change.id);
  if (it != entries_.end()) {
    Entry& entry = it->second;
    if (is_waiting(change.state) && entry.job.state == change.state &&
        entry.job.next_attempt_ms == change.next_attempt_ms &&
        entry.job.priority == change.priority) {
      return;  // a reason or a counter changed: the job waits as it did
    }
    order_.erase(key_of(entry.job));
    unblocked_.erase(key_of(entry.job));
    entries_.erase(it);
  }
  if (!is_waiting(change.state)) return;
  order_.emplace(key_of(change), change.id);
  unblocked_.emplace(key_of(change), change.id);
  entries_.emplace(change.id, Entry{change, std::nullopt});
}

void WaitingQueue::mark_blocked(JobId id, std::uint64_t version) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  it->second.blocked_at = version;
  unblocked_.erase(key_of(it->second.job));
}

void WaitingQueue::hold(JobId id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.held) return;
  it->second.held = true;
  order_.erase(key_of(it->second.job));
  unblocked_.erase(key_of(it->second.job));
}

void WaitingQueue::release(JobId id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || !it->second.held) return;
  it->second.held = false;
  it->second.blocked_at.reset();
  order_.emplace(key_of(it->second.job), id);
  unblocked_.emplace(key_of(it->second.job), id);
}

std::vector<JobId> WaitingQueue::due(Millis now, std::uint64_t version,
                                     const std::function<bool(const JobChange&)>& may_fit) {
  std::vector<JobId> out;
  // Blocked jobs are looked at once per capacity version; between versions only the others.
  const bool sweep = swept_version_ != version;
  swept_version_ = version;
  for (const auto& [key, id] : sweep ? order_ : unblocked_) {
    Entry& entry = entries_.at(id);
    if (entry.blocked_at) {
      if (*entry.blocked_at == version) continue;
      if (!may_fit(entry.job)) {
        entry.blocked_at = version;
        continue;
      }
      // Worth a try: unblocked until a try says otherwise (a round may not get to it).
      entry.blocked_at.reset();
      unblocked_.emplace(key, id);
    }
    if (entry.job.next_attempt_ms && *entry.job.next_attempt_ms > now) continue;
    out.push_back(id);
  }
  return out;
}

std::optional<Millis> WaitingQueue::next_due(Millis now) const {
  std::optional<Millis> out;
  for (const auto& [id, entry] : entries_) {
    const auto& at = entry.job.next_attempt_ms;
    if (at && *at > now && (!out || *at < *out)) out = *at;
  }
  return out;
}

}  // namespace orch
