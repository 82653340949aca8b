#pragma once
// The jobs that wait to be placed (pending, resuming, staging), kept in memory in the order
// placement tries them: higher priority first (issue 18); within a priority resuming jobs first
// (they hold progress that decays), then by id, the order of submission. Each entry remembers the
// capacity version at which placement last found no cluster for it, so that a placement round tries
// only what a change could have unblocked: a job blocked at the current version is skipped at the
// cost of a comparison, and one blocked at an older version is tried only if some cluster could
// hold it at all (a caller's cheap check). The queue is fed from the rows the store wrote
// (Store::job_changes), never by reading the jobs table again; it does no I/O.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "scheduler/store/rows.h"

namespace orch {

class WaitingQueue {
 public:
  // Replaces the whole queue (at start, or after a rolled-back transaction).
  void reset(const std::vector<JobChange>& waiting);
  // A job row was written: it joins, moves or leaves the queue by its state. A change of its
  // state or backoff forgets that it was blocked.
  void apply(const JobChange& change);

  // Placement found no cluster for the job at this capacity version.
  void mark_blocked(JobId id, std::uint64_t version);
  // A rule holds the job whatever the clusters hold (job_holds.h): it stays in the queue but no
  // round tries it until it is released (or its row changes state, backoff or priority).
  void hold(JobId id);
  void release(JobId id);

  // The jobs a round should try at `now`, in placement order: those whose backoff has passed and
  // that were not found blocked at `version`. A job blocked at an older version is tried only if
  // may_fit says a cluster could hold it; if not, it is marked blocked at `version` right away.
  std::vector<JobId> due(Millis now, std::uint64_t version,
                         const std::function<bool(const JobChange&)>& may_fit);

  // The order placement tries jobs in: (-priority; 0 for resuming, 1 otherwise; id).
  using Key = std::tuple<int, int, JobId>;
  static Key key_of(const JobChange& job);

  std::size_t size() const { return entries_.size(); }
  bool contains(JobId id) const { return entries_.count(id) != 0; }
  // The earliest backoff still ahead of now among the queued jobs, if any.
  std::optional<Millis> next_due(Millis now) const;

 private:
  struct Entry {
    JobChange job;
    std::optional<std::uint64_t> blocked_at;
    bool held = false;
  };
  // Every waiting job, and those not blocked (never tried, or due to be tried again): while the
  // capacity version stays the same a round looks at the second set only, so an idle tick with
  // a long queue of blocked jobs costs nothing.
  std::map<Key, JobId> order_;
  std::map<Key, JobId> unblocked_;
  std::unordered_map<JobId, Entry> entries_;
  std::optional<std::uint64_t> swept_version_;
};

}  // namespace orch
