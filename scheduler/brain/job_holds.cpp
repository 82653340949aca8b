// Why a waiting job may not be placed now (job_holds.h): the rules, the held jobs woken when
// what they wait on changes, and a dependent's checkpoints of the jobs it waited for.
#include "scheduler/brain/job_holds.h"

#include <algorithm>

#include "scheduler/spec/after_section.h"

namespace orch {
namespace {

// How long a dependent waits for the newest checkpoint of a job that succeeded to be verified
// before it takes the newest verified one, and how often it looks again meanwhile.
constexpr Millis kVerifyWaitMs = 10 * 60 * 1000;
constexpr Millis kVerifyLookMs = 1000;

std::string label(JobId id, const std::string& name) {
  return "job " + std::to_string(id) + " (" + name + ")";
}

}  // namespace

Result<std::optional<Hold>> JobHolds::hold_of(const JobRow& job, Millis now) {
  auto deps = dependency_hold(job, now);
  if (!deps || *deps) return deps;
  auto budget = budgets_.hold_of(job);
  if (!budget) return budget.error();
  if (*budget) {
    wake_all_at(next_month_start_ms(now));  // a new month releases it
    return std::optional<Hold>(Hold{std::move(**budget), false});
  }
  return std::optional<Hold>();
}

Result<bool> JobHolds::keep_waiting(JobRow& job, Millis now) {
  auto hold = hold_of(job, now);
  if (!hold) return hold.error();
  if (!*hold) {
    held_.erase(job.id);
    if (auto r = budgets_.lower_priority(job); !r) return r.error();  // over: <class>
    return false;
  }
  if ((*hold)->final) {
    held_.erase(job.id);
    job.reason = (*hold)->reason;
    job.next_attempt_ms.reset();
    if (auto r = store_.set_job_state(job, JobState::cancelled, now); !r) return r.error();
    if (auto r = event(job.id, std::nullopt, "cancelled", "cancelled: " + job.reason); !r) {
      return r.error();
    }
    return true;
  }
  held_.insert(job.id);
  if ((*hold)->reason != job.reason) {
    job.reason = (*hold)->reason;
    if (auto r = store_.update_job(job, now); !r) return r.error();
    if (auto r = event(job.id, std::nullopt, "held", job.reason); !r) return r.error();
  }
  return true;
}

Result<std::optional<Hold>> JobHolds::dependency_hold(const JobRow& job, Millis now) {
  // Only a job that never started waits for others (staging or resuming, it did start).
  if (job.spec.after.empty() || job.state != JobState::pending || satisfied_.count(job.id)) {
    return std::optional<Hold>();
  }
  std::string waits;
  for (const AfterSpec& a : job.spec.after) {
    auto found = store_.job(a.id);
    if (!found) return found.error();
    if (!*found) {
      return std::optional<Hold>(
          Hold{"job " + a.job + ", which it waits for, no longer exists", true});
    }
    const JobRow& up = **found;
    const std::string who = label(up.id, up.name);
    const bool ended = is_terminal(up.state);
    if (ended && up.state != JobState::succeeded && a.state == AfterState::succeeded) {
      const std::string how = up.state == JobState::failed ? "failed" : "was cancelled";
      return std::optional<Hold>(Hold{who + " " + how + ": it can no longer succeed", true});
    }
    std::string wait;
    if (!ended) {
      wait = who + " to " + (a.state == AfterState::succeeded ? "succeed" : "end");
      dependents_[up.id].insert(job.id);
    } else {
      auto unverified = checkpoint_unverified(up, now);
      if (!unverified) return unverified.error();
      if (*unverified) {
        wait = **unverified;
        wake_at(job.id, now + kVerifyLookMs);
      }
    }
    if (!wait.empty()) waits += (waits.empty() ? "" : ", ") + wait;
  }
  if (waits.empty()) {
    satisfied_.insert(job.id);
    return std::optional<Hold>();
  }
  return std::optional<Hold>(Hold{"waiting for " + waits, false});
}

Result<std::optional<std::string>> JobHolds::checkpoint_unverified(const JobRow& up, Millis now) {
  if (now - up.updated_ms > kVerifyWaitMs) return std::optional<std::string>();
  auto ckpts = store_.checkpoints_with_copies(up.id);
  if (!ckpts) return ckpts.error();
  if (ckpts->empty()) return std::optional<std::string>();
  const CheckpointRow& newest = ckpts->back();
  auto copies = store_.replicas_of_checkpoint(newest.id);
  if (!copies) return copies.error();
  for (const auto& r : *copies) {
    if (r.state == ReplicaState::verified) return std::optional<std::string>();
  }
  for (const auto& r : *copies) {
    if (r.state == ReplicaState::present || r.state == ReplicaState::copying) {
      return std::optional<std::string>(label(up.id, up.name) + "'s checkpoint at step " +
                                        std::to_string(newest.step) + " to be verified");
    }
  }
  return std::optional<std::string>();
}

void JobHolds::note_changes(const std::vector<JobChange>& changes) {
  for (const JobChange& c : changes) {
    if (!is_terminal(c.state)) continue;
    auto it = dependents_.find(c.id);
    if (it == dependents_.end()) continue;
    woken_.insert(woken_.end(), it->second.begin(), it->second.end());
    dependents_.erase(it);
  }
}

void JobHolds::wake_at(JobId job, Millis at) {
  timers_.emplace(at, job);
}

void JobHolds::wake_all_at(Millis at) {
  if (!wake_all_at_ || at < *wake_all_at_) wake_all_at_ = at;
}

std::vector<JobId> JobHolds::take_woken(Millis now) {
  std::vector<JobId> out = std::move(woken_);
  woken_.clear();
  while (!timers_.empty() && timers_.begin()->first <= now) {
    out.push_back(timers_.begin()->second);
    timers_.erase(timers_.begin());
  }
  if (wake_all_at_ && *wake_all_at_ <= now) {
    wake_all_at_.reset();
    out.insert(out.end(), held_.begin(), held_.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<Millis> JobHolds::next_wake() const {
  std::optional<Millis> out = wake_all_at_;
  if (!timers_.empty() && (!out || timers_.begin()->first < *out)) out = timers_.begin()->first;
  return out;
}

void JobHolds::forget() {
  dependents_.clear();
  held_.clear();
  satisfied_.clear();
  woken_.clear();
  timers_.clear();
}

}  // namespace orch
