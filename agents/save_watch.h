#pragma once
// The save watch (issue 43, I/O stalls): a checkpoint save is in progress from the job's
// `checkpoint_start` protocol line until its `checkpoint` line. One that runs past its bound
// yields one `io_stall` record (fsynced) naming the path, the mount point and the filesystem
// type, and every heartbeat repeats it as "stall":{...} while the save lasts. A checkpoint record
// after a start gains "save_s". Pure logic over the times it is given (tested with a fake clock);
// where a path lies is asked of a lookup (mount_of_path below, or a fake).
//
// The bound: --io-stall-after-s (the launch's, from the job's median save time across attempts;
// 0: none), and, once kMeasuredSaves saves were measured in this attempt, kStallFactor x their
// median, at least kStallMinMs; the smaller of the two when both are known.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/progress_tracker.h"

namespace orch::agent {

constexpr int kMeasuredSaves = 3;             // saves measured before the attempt's own bound
constexpr double kStallFactor = 5.0;          // k: the attempt's bound is k x its median save
constexpr std::int64_t kStallMinMs = 60'000;  // ... and never below a minute

// Where a path lies: its mount point and filesystem type ("" when unknown).
struct MountOf {
  std::string mount;
  std::string fs;
};
using MountLookup = std::function<MountOf(const std::string& path)>;

// The mount that holds `path` (absolute; normalised lexically, never touching the filesystem,
// which may be the stalled one) in the text of /proc/self/mountinfo: the longest mount point
// that is a prefix of it, the last such line winning (a mount over another). Pure.
MountOf mount_of_path(std::string_view mountinfo, const std::string& path);
// The same from this process's own /proc/self/mountinfo (a read of procfs only).
MountOf mount_of_path(const std::string& path);

struct SaveWatchOptions {
  std::int64_t stall_after_ms = 0;  // --io-stall-after-s; 0: no bound from the launch
  std::string node;                 // "" : left out of the record
  std::optional<std::int64_t> task_rank;
};

class SaveWatch {
 public:
  SaveWatch(const SaveWatchOptions& options, MountLookup lookup);

  // A checkpoint_start line: the save begins (a second start before its checkpoint replaces the
  // first). Returns its record, fsynced.
  std::vector<EventRecord> on_start(std::int64_t step, const std::string& path,
                                    std::int64_t steady_ms, std::int64_t wall_ms);
  // A checkpoint line: the save in progress ends; its duration is measured.
  void on_checkpoint(std::int64_t steady_ms);
  // The io_stall record when the save in progress passed its bound (once per save).
  std::vector<EventRecord> on_tick(std::int64_t steady_ms, std::int64_t wall_ms);
  // Milliseconds until on_tick has something to do; -1: nothing pending.
  std::int64_t next_due_in(std::int64_t steady_ms) const;
  // Adds "stall":{...} to heartbeat records while a stalled save lasts, and "save_s" to the
  // checkpoint record of a save whose start was seen (call before on_checkpoint).
  void decorate(std::vector<EventRecord>* records, std::int64_t steady_ms) const;
  // The bound now in force, in ms; nullopt: none (no launch bound, too few saves measured).
  std::optional<std::int64_t> bound_ms() const;

 private:
  struct Save {
    std::int64_t step = 0;
    std::string path;
    std::int64_t started_ms = 0;  // steady
    std::int64_t bound_ms = 0;    // fixed when the save began
    bool stalled = false;
    MountOf where;
  };
  std::string stall_json(const Save& s, std::int64_t steady_ms, bool record,
                         std::int64_t wall_ms) const;

  SaveWatchOptions options_;
  MountLookup lookup_;
  std::optional<Save> save_;
  std::vector<std::int64_t> measured_ms_;
};

}  // namespace orch::agent
