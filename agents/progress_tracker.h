#pragma once
// Turns the job's protocol lines and the passing of time into event records: progress and
// checkpoint records, heartbeats, and one hang record when the job stays silent too long. Pure
// logic over the times it is given, so it is tested without processes or sleeps.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/protocol_scan.h"

namespace orch::agent {

struct TrackerOptions {
  std::int64_t heartbeat_ms = 30'000;    // 0: no heartbeats
  std::int64_t hang_after_ms = 600'000;  // 0: never report a hang
  // Progress records are coalesced to at most one per interval (the newest step wins), so a job
  // that reports every few milliseconds does not grow the event file without bound.
  std::int64_t progress_interval_ms = 1'000;
  // Whose heartbeats these are, so that the last line of a task's event file says it: the node
  // ("": left out) and, for a task of a gang, its rank.
  std::string node;
  std::optional<std::int64_t> task_rank;
};

struct EventRecord {
  std::string line;      // the JSON record, without newline
  bool durable = false;  // fsync after writing
  std::string warning;   // also say this on stderr ("" for none)
};

class ProgressTracker {
 public:
  ProgressTracker(const TrackerOptions& options, std::int64_t start_steady_ms);

  // A protocol line seen at these times.
  std::vector<EventRecord> on_line(const ProtocolLine& line, std::int64_t steady_ms,
                                   std::int64_t wall_ms);
  // Whatever is due by now: a coalesced progress record, a heartbeat, a hang.
  std::vector<EventRecord> on_tick(std::int64_t steady_ms, std::int64_t wall_ms);
  // The job is over: the progress record still held back, if any.
  std::vector<EventRecord> flush();
  // Milliseconds from steady_ms until on_tick has something to do; -1 when nothing is pending.
  std::int64_t next_due_in(std::int64_t steady_ms) const;

 private:
  struct Pending {
    std::int64_t step;
    std::int64_t wall_ms;
  };
  EventRecord progress_record(const Pending& p) const;

  TrackerOptions options_;
  std::int64_t last_activity_ms_;  // steady: start, or the last protocol line
  std::optional<std::int64_t> last_progress_wall_ms_;
  std::optional<std::int64_t> last_progress_write_ms_;  // steady
  std::optional<Pending> pending_;
  std::int64_t next_heartbeat_ms_;
  bool hang_reported_ = false;
};

}  // namespace orch::agent
