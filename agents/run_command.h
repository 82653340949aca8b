#pragma once
// `orchestrate-agent run`: runs one command as the agent's child, forwards stop signals to it,
// relays its stdout (watching for progress protocol lines) and records its start, progress,
// heartbeats, a hang and its end as JSON lines in an event file (see agents/README.md). With a
// place in a gang (issue 14), it exports the task's place to the command and relays whole lines.

#include <string>
#include <vector>

#include "agents/live_watch.h"
#include "agents/task_place_flags.h"

namespace orch::agent {

struct RunOptions {
  std::string events_path;      // JSON lines are appended here; %t, %n and %% are replaced
  std::string node_name;        // the node as the site knows it; "": default_node_name()
  PlaceRequest place;           // the task's place in its gang; none: a task alone
  int lock_fd = -1;             // inherited lock fd to keep for life but not pass on; -1: none
  long long grace_ms = 10'000;  // after the command exits: how long leftovers get before SIGKILL
  long long heartbeat_ms = 30'000;    // a heartbeat record this often; 0: none
  long long hang_after_ms = 600'000;  // no progress line for this long: a hang record; 0: never
  long long io_stall_after_ms = 0;  // a save running this long: an io_stall record; 0: no bound
  std::string run_as;  // the user the command runs as (the agent must be root); "": the agent's
  WatchOptions watch;  // the live watch (issue 43): kernel log and nvidia-smi while the job runs
  std::string push_url;             // records pushed home (issue 44); "": ORCH_PUSH_URL
  long long push_every_ms = 1'000;  // a push batch at most this long after its first record
  std::vector<std::string> argv;  // the command and its arguments; argv[0] is searched in PATH
};

// Parses the words after `run`. On failure returns false and sets *error to a usage message.
bool parse_run_options(const std::vector<std::string>& args, RunOptions* options,
                       std::string* error);

// Runs the command to completion. Returns the agent's exit status: the child's exit code, or
// 128 + signal when a signal ended it, or 2 when the place cannot be read from srun's variables,
// the event file cannot be written at start, the job's user cannot be taken on (not root, no
// such user) or pushing is asked for but cannot work (agents/push_sender.h): the command is not
// run then.
int run_command(const RunOptions& options);

}  // namespace orch::agent
