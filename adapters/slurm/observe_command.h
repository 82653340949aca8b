#pragma once
// A poll round's one SSH command on the login node (SlurmSite::observe_many, and observe() for
// one token): squeue for the tokens, as squeue_by_names_argv, and in the same round trip each
// token's run directory as task_events.h reads it. Pure: the command text and the reading of its
// output; every path and token goes through shell_quote().
//
//   /bin/sh -c '
//     squeue -h -t all --name=<a>,<b> -o <format>; s=$?
//     o() { <token>; the gang file's line; the node_lost marker's line; tail -v -n 1 of each
//           <tasks dir>/*.events.jsonl }
//     { printf "\n@@orchestrate-tasks %s\n" "$(date +%s%3N)"; o <a> ...; o <b> ...; } 2>/dev/null |
//       cut -c 1-4096
//     exit $s'
//
// The exit status and stderr are squeue's, so run()'s handling of a silent controller is
// unchanged. The second part prints after squeue has answered: the clock (ms since the epoch)
// first, then per token "@T <token>", "@G <gang line>", "@M <marker line>" and tail's
// "==> <path> <==" headers, each followed by that file's last line. Only shell builtins run for
// a token without event files (pending, never launched); one `tail` for a token with some. Lines
// are cut at 4096 bytes (a record longer than that, a checkpoint with a very long path, does
// not parse and is judged on the next poll), so the output stays within tokens x tasks x 4 KiB.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/slurm/batch_script.h"
#include "adapters/slurm/task_events.h"
#include "scheduler/common/result.h"

namespace orch::slurm {

// The command above, for launch tokens (check_token). ErrorKind::invalid when a token or path
// cannot be quoted.
Result<std::string> observe_command(const std::vector<std::string>& tokens,
                                    const std::string& storage_root);

struct ObserveOutput {
  std::string squeue;                         // squeue's own stdout, for parse_squeue
  bool tasks_read = false;                    // the second part ran (its first line came back)
  std::optional<std::int64_t> now_ms;         // the cluster's clock; none if `date` gave no number
  std::map<std::string, TaskSnapshot> tasks;  // by token, every token the command named
};
// Never fails: what is missing or does not parse is left out (a task file whose line does not
// parse is kept with readable = false).
ObserveOutput split_observe_output(std::string_view output);

// Records a node loss and cancels the job, in one command: the marker through node_lost.tmp and
// mv (atomic: a reader sees all of it or nothing), then `scancel --name=<token>`, whose status
// is the command's (the marker is written even when the cancel fails, and the other way round).
Result<std::string> node_lost_command(const RunPaths& paths, const std::string& token,
                                      const NodeLostMarker& marker);

}  // namespace orch::slurm
