#pragma once
// The batch script and sbatch command line of one attempt on a Slurm cluster. Pure: the adapter
// uploads `script` by SFTP to `paths.script` and runs `submit_command` over SSH.
//
// Run directory of an attempt, on the cluster's shared filesystem:
//   <storage_root>/runs/<token>/job.sh      the batch script
//   <storage_root>/runs/<token>/output.log  stdout and stderr of every task, appended (never
//                                           truncated)
//   <storage_root>/runs/<token>/job_id      written by the script itself when it starts:
//                                           $SLURM_JOB_ID, so a restarted server can find it
//   <storage_root>/runs/<token>/gang        one line for the observer: the tasks, tasks per node
//                                           and heartbeat settings (task_events.h), written at
//                                           launch
//   <storage_root>/runs/<token>/tasks/<rank>.events.jsonl  each task's agent records
//   <storage_root>/runs/<token>/node_lost   written by the site when it ended the attempt for a
//                                           silent task (task_events.h)
//   <storage_root>/runs/<token>/setup_failed  the job's setup failed: "exit N", its last lines
//   <storage_root>/runs/<token>/work/       the job's run directory (ORCH_RUN_DIR); a job with
//                                           code starts its tasks in <storage_root>/code/<hash>
//                                           (workdir_steps.h)
//
// Every value that reaches the remote shell (paths, the job's name and command, environment
// values, partition, account...) goes through shell_quote(); environment variable names are
// checked.
//
// Every task runs under the agent (issue 14, docs/launch-contract.md): after the exports the
// script finds the rendezvous host and runs, in the background,
//   srun --nodes=<N> --ntasks-per-node=<K> --kill-on-bad-exit=1 <agent> run
//       --events <run dir>/tasks/%t.events.jsonl --heartbeat-s <s> --hang-after-s <s>
//       --place-from slurm --master-addr "$master" --master-port <port> -- <shell words>
// (the shell words: job_shell_argv(shell, command), scheduler/model/job_shape.h: bash where the
// node has it unless the job's `shell:` says otherwise)
// and waits for it, passing the pre-termination signal on to srun (which forwards it to every
// task, whose agent forwards it to the command's processes). srun ends the step when one task
// exits non-zero or dies; a node that dies under it is the site's heartbeat rule (task_events.h),
// which does not wait for Slurm's SlurmdTimeout. No --wait: tasks that finish at different times
// with status 0 are not a failure.
// The rendezvous host ($master) is the first node of the allocation (node rank 0 under srun's
// block distribution), by its NodeAddr from `scontrol -o show node`: the address Slurm itself
// reaches the node at, which every node of the allocation can reach (the lab's nodes all have
// NodeAddr 127.0.0.1 under distinct names that do not resolve); the node's name when scontrol
// does not say. The port is master_port_for(token).
//
// sbatch options: --job-name=<token> (how the adapter finds the job again), --comment with the
// token and the job's name, --output/--error to output.log with --open-mode=append, --chdir,
// --nodes, --ntasks-per-node, --gres=<gres>:<gpus_per_node>, --cpus-per-task and --mem (the
// job's, when set), --partition/--account/--qos/--reservation/--constraint/--exclusive (the
// job's `slurm:` over the cluster's, as slurm.job_options allows: effective_slurm_options) and
// --time when set, --exclude for quarantined nodes, --signal=B:<sig>@<pre_term_s>, --no-requeue
// (the brain decides restarts), --parsable.
//
// Details (clarifications of the above):
// - The script writes job_id (via job_id.tmp and mv) as its first command, which also ends
//   sbatch's scan for #SBATCH lines: no value further down can add an sbatch option. It then
//   enters work/ (exit 1 if it cannot), exports request.env and then ORCH_LAUNCH_TOKEN (and
//   ORCH_TOKEN unless the job sets it: launch_token_env), ORCH_JOB_ID, ORCH_ATTEMPT,
//   ORCH_RUN_DIR (= work), ORCH_GPUS (nodes * gpus_per_node) and ORCH_SITE (the cluster's
//   name), as the local provider does (docs/progress-protocol.md); srun passes them
//   to every task, and the agent adds the task's place (ORCH_TASK_RANK, RANK, MASTER_ADDR...).
// - --comment is "orchestrate token=<token> name=<job name>", the name with control characters
//   as '?' and '=' as ':' (so it cannot split squeue/scontrol lines or read as a key=value of
//   `scontrol show job -o`), at most 200 bytes.
// - '%' in --output/--error is written '%%' (sbatch expands %j, %N...), and so in the agent's
//   --events (the agent expands %t, %n). --gres is omitted when gpus_per_node is 0, --signal
//   when pre_term_s is 0, --exclude when exclude_nodes is empty.
// - Caveat seen in the lab: /bin/sh is dash on Debian, and dash does not exec the last command
//   of `sh -c`. The agent forwards signals to its whole process group, so the trainer under
//   that shell gets the pre-termination signal too (docs/config.md advises `exec`).

#include <string>
#include <string_view>
#include <vector>

#include "scheduler/cluster_port.h"
#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch::slurm {

struct RunPaths {
  std::string dir;           // <storage_root>/runs/<token>
  std::string script;        // dir/job.sh
  std::string output;        // dir/output.log
  std::string job_id;        // dir/job_id
  std::string work;          // dir/work
  std::string gang;          // dir/gang
  std::string tasks;         // dir/tasks
  std::string node_lost;     // dir/node_lost
  std::string setup_failed;  // dir/setup_failed: written by the setup step when it failed
                             // (issue 40; workdir_steps.h)
  std::string secrets;       // dir/secrets.env: the job's secret_env, mode 0600, read and removed
                             // by job.sh before anything else runs
};

RunPaths run_paths(const std::string& storage_root, const std::string& token);
// <storage_root>/runs, where every attempt's run directory is (run_paths(root, t).dir is
// runs_dir(root) + "/" + t).
std::string runs_dir(const std::string& storage_root);

// A token usable as a Slurm job name and a directory name: 1-128 characters from
// [A-Za-z0-9._-], not starting with '.'. ErrorKind::invalid otherwise.
Result<void> check_token(const std::string& token);
// Node names that can go into a Slurm node list option (`option`, e.g. "sbatch --exclude", for
// the message): not empty, no ',', '[', ']', blank or control character. ErrorKind::invalid.
Result<void> check_node_names(const std::vector<std::string>& nodes, std::string_view option);

struct BatchPlan {
  RunPaths paths;
  std::string script;   // contents of job.sh
  std::string secrets;  // contents of secrets.env ("" when the job has no secret_env)
  // Shell command that creates dir, work, tasks and the agent's directory (mkdir -p), writes the
  // gang file, and prints the agent's size when it is there and executable (parse_agent_size:
  // the adapter uploads it otherwise), all in one round trip.
  std::string prepare_command;
  std::string submit_command;  // shell command: sbatch <options> <script>
};

// ErrorKind::invalid for what cannot be submitted safely: a NUL byte in a value, an invalid
// environment variable name, a token with characters outside [A-Za-z0-9._-] (or empty, longer
// than 128, or starting with '.'). Also: a storage root that is not an absolute path, or holds a
// control character or '\' (sbatch drops backslashes from --output and the path would differ);
// fewer than 1 node or task per node, negative gpus_per_node, heartbeat or hang seconds; an
// excluded node name that is empty or holds ',', '[', ']' or a blank; an agent path that is not
// absolute. `agent` is the agent's path on the cluster (remote_agent_path, probe_command.h).
Result<BatchPlan> make_batch_plan(const LaunchRequest& request, const ClusterSpec& cluster,
                                  const std::string& agent);

}  // namespace orch::slurm
