// See progress_tracker.h.
#include "agents/progress_tracker.h"

#include <algorithm>
#include <cstdio>

#include "agents/json_writer.h"

namespace orch::agent {

ProgressTracker::ProgressTracker(const TrackerOptions& options, std::int64_t start_steady_ms)
    : options_(options),
      last_activity_ms_(start_steady_ms),
      next_heartbeat_ms_(start_steady_ms + options.heartbeat_ms) {}

EventRecord ProgressTracker::progress_record(const Pending& p) const {
  JsonWriter w;
  w.begin_object();
  w.member("event", "progress");
  w.member("step", p.step);
  w.member("at_ms", p.wall_ms);
  w.end_object();
  return {w.str(), false, ""};
}

std::vector<EventRecord> ProgressTracker::on_line(const ProtocolLine& line, std::int64_t steady_ms,
                                                  std::int64_t wall_ms) {
  std::vector<EventRecord> out;
  last_activity_ms_ = steady_ms;
  last_progress_wall_ms_ = wall_ms;
  hang_reported_ = false;
  if (line.kind == ProtocolLine::Kind::progress) {
    pending_ = Pending{line.step, wall_ms};
    if (!last_progress_write_ms_ ||
        steady_ms - *last_progress_write_ms_ >= options_.progress_interval_ms) {
      out.push_back(progress_record(*pending_));
      pending_.reset();
      last_progress_write_ms_ = steady_ms;
    }
    return out;
  }
  // A checkpoint comes after the progress it follows, so the held-back step goes first.
  for (EventRecord& r : flush()) out.push_back(std::move(r));
  JsonWriter w;
  w.begin_object();
  w.member("event", "checkpoint");
  w.member("step", line.step);
  w.member("path", line.path);
  w.member("at_ms", wall_ms);
  w.end_object();
  out.push_back({w.str(), true, ""});
  return out;
}

std::vector<EventRecord> ProgressTracker::on_tick(std::int64_t steady_ms, std::int64_t wall_ms) {
  std::vector<EventRecord> out;
  if (pending_ && steady_ms - *last_progress_write_ms_ >= options_.progress_interval_ms) {
    out.push_back(progress_record(*pending_));
    pending_.reset();
    last_progress_write_ms_ = steady_ms;
  }
  if (options_.heartbeat_ms > 0 && steady_ms >= next_heartbeat_ms_) {
    JsonWriter w;
    w.begin_object();
    w.member("event", "heartbeat");
    w.member("at_ms", wall_ms);
    if (last_progress_wall_ms_) w.member("last_progress_ms", *last_progress_wall_ms_);
    if (!options_.node.empty()) w.member("node", options_.node);
    w.optional_member("task_rank", options_.task_rank);
    w.end_object();
    out.push_back({w.str(), false, ""});
    // A late tick (a stopped agent, a suspended VM) skips the beats it missed.
    while (next_heartbeat_ms_ <= steady_ms) next_heartbeat_ms_ += options_.heartbeat_ms;
  }
  if (options_.hang_after_ms > 0 && !hang_reported_ &&
      steady_ms - last_activity_ms_ >= options_.hang_after_ms) {
    hang_reported_ = true;
    const double silent_s = static_cast<double>(steady_ms - last_activity_ms_) / 1000.0;
    JsonWriter w;
    w.begin_object();
    w.member("event", "hang");
    w.member("silent_s", silent_s, 1);
    w.member("at_ms", wall_ms);
    w.end_object();
    char msg[128];
    std::snprintf(msg, sizeof msg, "orchestrate-agent: no progress line for %.0f s (hang_after)",
                  silent_s);
    out.push_back({w.str(), true, msg});
  }
  return out;
}

std::vector<EventRecord> ProgressTracker::flush() {
  std::vector<EventRecord> out;
  if (pending_) {
    out.push_back(progress_record(*pending_));
    pending_.reset();
  }
  return out;
}

std::int64_t ProgressTracker::next_due_in(std::int64_t steady_ms) const {
  std::int64_t due = -1;
  auto consider = [&](std::int64_t at) {
    std::int64_t in = std::max<std::int64_t>(0, at - steady_ms);
    due = due < 0 ? in : std::min(due, in);
  };
  if (pending_) consider(*last_progress_write_ms_ + options_.progress_interval_ms);
  if (options_.heartbeat_ms > 0) consider(next_heartbeat_ms_);
  if (options_.hang_after_ms > 0 && !hang_reported_) {
    consider(last_activity_ms_ + options_.hang_after_ms);
  }
  return due;
}

}  // namespace orch::agent
