#pragma once
// The live watch of `orchestrate-agent run` (issue 43): while the job runs, the agent follows the
// kernel log for Xid lines every --watch-s and samples nvidia-smi every --gpu-sample-s, inside
// its one poll() loop. This file does the reading (no thread, nothing that blocks: the kernel
// log is read without blocking, nvidia-smi runs as a child whose output the loop polls, killed
// at its deadline); agents/gpu_watch.h judges what was read.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/gpu_watch.h"

namespace orch::agent {

struct WatchOptions {
  std::int64_t watch_ms = 2'000;  // kernel log poll; 0: no watch at all
  std::string kernel_log;         // "": /dev/kmsg
  std::string nvidia_smi;         // "": nvidia-smi in PATH; "none": no samples
  std::int64_t gpu_sample_ms = 30'000;  // 0: no samples
  bool stop_on_fault = false;           // --fault-action stop
};

// The watch's flags of `run`: --watch-s, --kernel-log, --nvidia-smi, --gpu-sample-s,
// --fault-action. is_watch_flag says whether a flag is one; parse_watch_flag sets it, false with
// *error on a bad value.
bool is_watch_flag(const std::string& flag);
bool parse_watch_flag(const std::string& flag, const std::string& value, WatchOptions* options,
                      std::string* error);

// New lines of a kernel log, from where it was when opened: /dev/kmsg from its end (each
// record's message), a plain file from its size at open (as tail -f; a file cut shorter is read
// again from its start; one that does not exist yet is opened when it appears).
class KernelLogFollower {
 public:
  ~KernelLogFollower();
  // false with *error when /dev/kmsg cannot be read (containers, dmesg_restrict).
  bool open(const std::string& path, std::string* error);
  // Appends the complete lines written since the last call (at most 1 MiB a call).
  void read_new(std::vector<std::string>* lines);

 private:
  void read_kmsg(std::vector<std::string>* lines);
  void read_file(std::vector<std::string>* lines);
  std::string path_;
  int fd_ = -1;
  bool kmsg_ = false;
  std::int64_t offset_ = 0;
  std::string partial_;
};

// One record the watch wants written now.
struct WatchRecord {
  std::string line;
  bool durable = true;
};

class LiveWatch {
 public:
  LiveWatch(WatchOptions options, std::string node, std::int64_t task_rank);
  ~LiveWatch();
  LiveWatch(const LiveWatch&) = delete;
  LiveWatch& operator=(const LiveWatch&) = delete;

  // Opens the kernel log and finds nvidia-smi; says on stderr (once) what it cannot watch.
  void start(std::int64_t steady_ms);
  // The sampler's stdout while a sample runs, else -1 (for poll()).
  int fd() const { return sampler_fd_; }
  // Milliseconds until on_tick has something to do; -1: nothing.
  std::int64_t next_due_in(std::int64_t steady_ms) const;
  // Reads what is due or ready (the sampler's output when poll() said so); the fault record
  // when a fault was found now. *stop: --fault-action stop and a fault was found now.
  std::vector<WatchRecord> on_tick(std::int64_t steady_ms, std::int64_t wall_ms, bool* stop);
  // The job is over: no more samples (a running one is killed).
  void finish();

  // A record line (a JSON object) with what the watch adds: "watch" on heartbeats, "fault"
  // on every record after the fault. The line unchanged when there is nothing to add.
  std::string decorate(const std::string& line) const;

 private:
  void start_sample(std::int64_t steady_ms);
  std::optional<GpuFault> pump_sample(std::int64_t steady_ms, std::int64_t wall_ms);
  void end_sample();

  WatchOptions options_;
  std::string node_;
  std::int64_t task_rank_;
  KernelLogFollower log_;
  bool log_open_ = false;
  std::string nvidia_smi_;  // resolved path; "": no samples
  GpuWatch judge_;
  std::int64_t next_log_ms_ = 0;
  std::int64_t next_sample_ms_ = 0;
  pid_t sampler_pid_ = -1;
  int sampler_fd_ = -1;
  std::int64_t sampler_deadline_ms_ = 0;
  std::string sampler_out_;
  std::string fault_json_;  // {"cause":...} once a fault was found
};

}  // namespace orch::agent
