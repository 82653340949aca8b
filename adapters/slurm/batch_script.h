#pragma once
// The batch script and sbatch command line of one attempt on a Slurm cluster. Pure: the adapter
// uploads `script` by SFTP to `paths.script` and runs `submit_command` over SSH.
//
// Run directory of an attempt, on the cluster's shared filesystem:
//   <storage_root>/runs/<token>/job.sh      the batch script
//   <storage_root>/runs/<token>/output.log  stdout and stderr, appended (never truncated)
//   <storage_root>/runs/<token>/job_id      written by the script itself when it starts:
//                                           $SLURM_JOB_ID, so a restarted server can find it
//   <storage_root>/runs/<token>/work/       the job's working directory
//
// Every value that reaches the remote shell (paths, the job's name and command, environment
// values, partition, account...) goes through shell_quote(); environment variable names are
// checked. The job's command runs as `exec /bin/sh -c <command>` so that Slurm's signals
// (the pre-termination signal, scancel's TERM) reach it directly.
//
// sbatch options: --job-name=<token> (how the adapter finds the job again), --comment with the
// token and the job's name, --output/--error to output.log with --open-mode=append, --chdir,
// --nodes, --gres=<gres>:<gpus_per_node>, --partition/--account/--qos/--time when set,
// --exclude for quarantined nodes, --signal=B:<sig>@<pre_term_s>, --no-requeue (the brain
// decides restarts), --parsable.
//
// Details (clarifications of the above):
// - The script writes job_id (via job_id.tmp and mv) as its first command, which also ends
//   sbatch's scan for #SBATCH lines: no value further down can add an sbatch option. It then
//   enters work/ (exit 1 if it cannot), exports request.env and then ORCH_TOKEN, ORCH_JOB_ID,
//   ORCH_ATTEMPT, ORCH_RUN_DIR (= work), ORCH_GPUS (nodes * gpus_per_node) and ORCH_SITE (the
//   cluster's name), as the local provider does (docs/progress-protocol.md).
// - --comment is "orchestrate token=<token> name=<job name>", the name with control characters
//   as '?' and '=' as ':' (so it cannot split squeue/scontrol lines or read as a key=value of
//   `scontrol show job -o`), at most 200 bytes.
// - '%' in --output/--error is written '%%' (sbatch expands %j, %N...). --gres is omitted when
//   gpus_per_node is 0, --signal when pre_term_s is 0, --exclude when exclude_nodes is empty.
// - Caveat seen in the lab: /bin/sh is dash on Debian, and dash does not exec the last command
//   of `sh -c`. --signal=B:... goes to the batch shell only, which after the exec is that `sh`:
//   a command `python train.py` never sees the USR1 (it kills the sh: FAILED, ExitCode 0:10);
//   `exec python train.py` (or a trap that forwards it) does. A plain scancel reaches all.

#include <string>
#include <string_view>
#include <vector>

#include "scheduler/cluster_port.h"
#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch::slurm {

struct RunPaths {
  std::string dir;     // <storage_root>/runs/<token>
  std::string script;  // dir/job.sh
  std::string output;  // dir/output.log
  std::string job_id;  // dir/job_id
  std::string work;    // dir/work
};

RunPaths run_paths(const std::string& storage_root, const std::string& token);

// A token usable as a Slurm job name and a directory name: 1-128 characters from
// [A-Za-z0-9._-], not starting with '.'. ErrorKind::invalid otherwise.
Result<void> check_token(const std::string& token);
// Node names that can go into a Slurm node list option (`option`, e.g. "sbatch --exclude", for
// the message): not empty, no ',', '[', ']', blank or control character. ErrorKind::invalid.
Result<void> check_node_names(const std::vector<std::string>& nodes, std::string_view option);

struct BatchPlan {
  RunPaths paths;
  std::string script;           // contents of job.sh
  std::string prepare_command;  // shell command that creates dir and work (mkdir -p)
  std::string submit_command;   // shell command: sbatch <options> <script>
};

// ErrorKind::invalid for what cannot be submitted safely: a NUL byte in a value, an invalid
// environment variable name, a token with characters outside [A-Za-z0-9._-] (or empty, longer
// than 128, or starting with '.'). Also: a storage root that is not an absolute path, or holds a
// control character or '\' (sbatch drops backslashes from --output and the path would differ);
// fewer than 1 node or negative gpus_per_node; an excluded node name that is empty or holds
// ',', '[', ']' or a blank.
Result<BatchPlan> make_batch_plan(const LaunchRequest& request, const ClusterSpec& cluster);

}  // namespace orch::slurm
