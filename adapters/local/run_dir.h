#pragma once
// The on-disk layout of a local site and the small file operations on it. Everything the site
// knows about an attempt lives in its run directory, so a restarted server (a new LocalSite on
// the same root) sees exactly what the old one saw.
//
//   <root>/DOWN                       exists while the site is in a simulated outage
//   <root>/runs/<token>/request.json  the LaunchRequest plus the nodes (and GPUs) it got
//   <root>/runs/<token>/agent.pid     the agent's pid (= its process group id)
//   <root>/runs/<token>/output.log    stdout and stderr of the agent and the job
//   <root>/runs/<token>/events.jsonl  the agent's start/exit records (agents/README.md)
//   <root>/runs/<token>/agent.lock    flock()ed by the agent for as long as it lives
//   <root>/runs/<token>/cancel_requested  when the first cancel was sent (ms since epoch)
//   <root>/runs/<token>/tasks/<r>/{agent.pid,events.jsonl,agent.lock}  task r >= 1 of a gang
//                                     (task 0 uses the run's own three files above)
//   <root>/runs/<token>/gang_failure.json  the task whose failure ended the gang, once decided

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/cluster_port.h"
#include "scheduler/common/result.h"
#include "scheduler/model/output_chunk.h"
#include "scheduler/model/task_fault.h"

namespace orch::local {

// Tokens name directories, so only [A-Za-z0-9._-], 1..128 characters, not starting with '.'.
Result<void> check_token(const std::string& token);

struct RunPaths {
  std::string dir;
  std::string request;
  std::string agent_pid;
  std::string output;
  std::string events;
  std::string lock;
  std::string cancel_requested;
  std::string gang_failure;
  // The job's own directory (its cwd and $ORCH_RUN_DIR). The control files above stay beside
  // it, out of the way of a job that cleans or rewrites its working directory.
  std::string work;
};
RunPaths run_paths(const std::string& root, const std::string& token);

// One task's agent files. Task 0 keeps the run's own (so a one-task run is laid out as it always
// was); task r >= 1 lives in tasks/<r>/.
struct TaskPaths {
  std::string dir;
  std::string agent_pid;
  std::string events;
  std::string lock;
};
TaskPaths task_paths(const RunPaths& run, int rank);
std::string runs_dir(const std::string& root);
std::string down_marker(const std::string& root);

// What the agent's event file says so far.
struct AgentEvents {
  std::optional<int> agent_pid;
  std::optional<int> child_pid;
  bool exited = false;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::optional<std::int64_t> exit_at_ms;
};
// A missing file reads as no events; lines that do not parse are skipped (a torn last line).
AgentEvents read_agent_events(const std::string& events_path);
// The GPU fault the newest complete record of a task's event file states (the agent's live
// watch repeats its fault in every record after it: task_fault.h); nullopt when none. Reads
// only the file's last 64 KiB, so it costs the same however long the job has run.
std::optional<TaskFault> read_task_fault(const std::string& events_path);

// True while some process holds the lock exclusively (the agent). Probing takes a shared lock
// for an instant, so probes from several threads or processes never disturb each other.
Result<bool> agent_alive(const std::string& lock_path);

struct StoredRequest {
  LaunchRequest request;
  std::vector<std::string> nodes;  // the nodes the attempt was given
  std::int64_t launched_at_ms = 0;
  // On a GPU site (gpu_slots.h): node -> the machine's device indexes the attempt holds there
  // ("gpu_indexes" in request.json). Empty on a cpu-slot site.
  std::map<std::string, std::vector<int>> gpus;
};
std::string request_to_json(const StoredRequest& stored);
Result<StoredRequest> request_from_json(const std::string& text, const std::string& path);

bool path_exists(const std::string& path);
// When the file was last written (ms since the epoch); nullopt when it does not exist.
std::optional<std::int64_t> modified_ms(const std::string& path);
Result<std::string> read_file(const std::string& path);
// Writes to a temporary file and renames it, so readers see the old or the new content only.
Result<void> write_file_atomic(const std::string& path, const std::string& content);
// Up to max_bytes from offset; short or empty at the end of the file.
Result<std::string> read_range(const std::string& path, std::uint64_t offset,
                               std::size_t max_bytes);

// Complete lines of the file from offset, reading at most max_bytes (see split_output_chunk).
Result<OutputLines> read_output_lines(const std::string& path, std::uint64_t offset,
                                      std::size_t max_bytes, bool final);

std::string errno_text(int err);

}  // namespace orch::local
