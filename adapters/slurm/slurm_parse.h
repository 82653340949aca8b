#pragma once
// What orchestrate asks Slurm and how it reads the answers: the exact argv of every Slurm
// command the adapter runs (always with an explicit output format, never default columns,
// which change between Slurm versions) and pure functions that parse their output. No I/O:
// everything here is tested on outputs captured from real Slurm (tests/unit/slurm/fixtures).
//
// Malformed output (a Slurm that answers something unexpected) is an ErrorKind::invalid error
// that quotes the offending line; it never crashes and never guesses.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/cluster_port.h"
#include "scheduler/common/result.h"
#include "scheduler/model/hostlist.h"

namespace orch::slurm {

// ---- nodes ------------------------------------------------------------------------------

struct NodeRecord {
  std::string name;
  std::string state;  // Slurm's long state as printed, lower case: "idle", "down*", "drained"
  std::string state_complete;  // every state flag, lower case: "idle+drain+not_responding"
  bool healthy = true;         // false for down, drain(ed/ing), fail(ing), not responding (*),
                               // maint, inval, unknown-and-not-responding
  std::string reason;          // Slurm's reason ("Not responding", "test"), "" when none
  int gpus = 0;                // GPUs from the node's GRES ("gpu:8", "gpu:h100:8(S:0-1)")
  int cpus = 0;
  int cpus_idle = 0;           // CPUsState's I of "A/I/O/T"
  std::int64_t memory_mb = 0;  // Memory: the node's RealMemory in MB (sbatch --mem's unit)
  int gpus_used = 0;           // GPUs jobs hold, anyone's, from GresUsed ("gpu:5(IDX:0-4)")
  // GPUs no new job can get: all of them when no CPU is idle (an --exclusive job, or one that
  // asked for every CPU and no GPU), else those jobs hold. At most gpus.
  int gpus_busy = 0;
  std::vector<std::string> partitions;
};

// argv whose output parse_node_list reads: one line per node (not per node and partition).
// `sinfo -h -N -O NodeList:|,PartitionName:|,StateLong:|,StateComplete:|,CPUs:|,CPUsState:|,
// Memory:|,Gres:|,GresUsed:|,Reason:|` (one argument): ':' with no width prints whole values, every
// field ends in '|', and Reason (free text that may hold '|') is last. CPUsState and GresUsed
// say what every tenant's jobs hold, so placement can count GPUs others use at a shared site. sinfo
// -N prints a node once per partition: the rows are merged. No output at all is an error (a cluster
// always has nodes; sinfo saw none it may show).
std::vector<std::string> node_list_argv();
Result<std::vector<NodeRecord>> parse_node_list(std::string_view output);

// The rule behind NodeRecord::healthy, from sinfo's StateLong ("drained*") and StateComplete
// ("idle+drain+not_responding"); either may be empty. A state this code does not know is not
// healthy; an unknown flag in StateComplete is ignored (flags are modifiers such as "cloud").
// Healthy despite the suffix: '~' '#' '!' '%' (power saving: Slurm powers nodes up on demand),
// '@' (reboot pending), '-' (planned), '+' (completing); "unknown" unless not responding.
bool node_is_healthy(std::string_view state_long, std::string_view state_complete);

// GPUs in a node's GRES: "gpu:8" -> 8, "gpu:h100:8(S:0-1)" -> 8, "gpu:a100:4,gpu:v100:2" -> 6,
// "gpu" -> 1, "(null)" or other resources only ("shard:8", "mps:100") -> 0. Reads GresUsed the
// same way: "gpu:5(IDX:0-4)" -> 5, "gpu:(null):0(IDX:N/A)" -> 0 (an untyped GPU's type prints
// as "(null)"), "gpu:h100:2(IDX:0,3)" -> 2.
Result<int> gpus_in_gres(std::string_view gres);

// ---- jobs -------------------------------------------------------------------------------

struct JobRecord {
  std::string job_id;
  std::string name;
  std::string state;   // base state, upper case: PENDING, RUNNING, COMPLETED, NODE_FAIL, ...
  std::string reason;  // Slurm's reason for pending/failed jobs, "" when None
  std::vector<std::string> nodes;  // expanded host list, empty while pending
  std::optional<int> exit_code;    // from ExitCode=<code>:<signal> where known
  std::optional<int> signal;
  std::string comment;       // sacct has it only with AccountingStoreFlags=job_comment
  std::string cancelled_by;  // "CANCELLED by 0" in sacct -> "0"; "" when unknown
};

// Live and recently finished jobs with this job name (orchestrate names jobs by launch token).
// `squeue -h -t all --name=<name> -o %i|%j|%T|%r|%N|%k`: the comment (free text) is last.
// One name: a launch token has no ',' (which would make it a list of names).
std::vector<std::string> squeue_by_name_argv(const std::string& job_name);
Result<std::vector<JobRecord>> parse_squeue(std::string_view output);
// A poll round's one query for many tokens: the same command with `--name=<a>,<b>,...` (squeue
// takes a comma-separated list of names). Every name must be a launch token (check_token: no
// ','); parse_squeue reads the answer, newest_by_name sorts it out.
std::vector<std::string> squeue_by_names_argv(const std::vector<std::string>& job_names);

// `scontrol show job -o <id>` (one job per line, key=value). Gives the exit code, which squeue
// does not, for MinJobAge after the end. "Invalid job id specified" is not an error: no jobs.
// The argv is `scontrol -o show job <id>`. Some values hold spaces (Comment, Command, WorkDir,
// StdOut, SubmitLine since 25.11): inside those, only a known key not yet printed starts the
// next field, and the first occurrence of a key wins, so a comment cannot fake a JobState.
std::vector<std::string> scontrol_show_job_argv(const std::string& job_id);
Result<std::vector<JobRecord>> parse_scontrol_jobs(std::string_view output);

// sacct (only where accounting storage is enabled): every job with this name, newest last,
// allocations only (no steps). `sacct -n -P -X --starttime=now-30days --name=<name>
// --format=JobID,JobName,State,ExitCode,NodeList,Reason,Comment`: without --starttime sacct
// looks back only to midnight. State may read "CANCELLED by <uid>"; NodeList "None assigned".
std::vector<std::string> sacct_by_name_argv(const std::string& job_name);
Result<std::vector<JobRecord>> parse_sacct(std::string_view output);
// The same for many tokens at once: `--name=<a>,<b>,...` (sacct takes a list of names too).
std::vector<std::string> sacct_by_names_argv(const std::vector<std::string>& job_names);

// Among several jobs, which is newer: Slurm job ids are numbers, the highest is the newest.
bool is_newer_job(const JobRecord& a, const JobRecord& b);
// A multi-name answer (squeue or sacct) sorted out: the newest job of each name, by name. Jobs
// with a name that is not in `names` are left out (Slurm matches names exactly, but nothing
// here relies on it); a name without a job is absent.
std::map<std::string, JobRecord> newest_by_name(std::vector<JobRecord> jobs,
                                                const std::vector<std::string>& names);
// sacct's answer when the cluster keeps no accounting ("Slurm accounting storage is disabled").
bool is_accounting_disabled(std::string_view sacct_stderr_or_stdout);

// Slurm's client commands saying they cannot reach slurmctld ("Unable to contact slurm
// controller (connect failure)", "Socket timed out on send/recv operation").
bool is_controller_unreachable(std::string_view stderr_text);

// `sbatch --parsable` prints "<id>" or "<id>;<cluster>" on stdout (pass stdout only: warnings
// go to stderr). Anything but exactly one such line is an error.
Result<std::string> parse_sbatch_job_id(std::string_view output);

// "alpha-n[1-3,7],gpu[001-002],login" -> each name (scheduler/model/hostlist.h).
using ::orch::expand_hostlist;

// ---- state mapping ----------------------------------------------------------------------

struct JobPhase {
  RunPhase phase = RunPhase::unknown;
  std::optional<ExitStatus> exit;  // set when phase == exited
  // Set when the state was not one this code knows (a newer Slurm): what was assumed, for a log.
  std::string note;
  // When queued with a reason (squeue's %r): why, in Slurm's words, with what Slurm's job
  // reason codes page says of the common ones: "Slurm: PENDING (Resources: the resources it
  // asks for are not available, e.g. used by other jobs)". RunObservation::waiting.
  std::string waiting;
};

// PENDING, CONFIGURING, REQUEUED, RESIZING, SUSPENDED -> queued (SUSPENDED: running but stopped);
// RUNNING, COMPLETING, STAGE_OUT, SIGNALING -> running; every terminal state -> exited with:
//   COMPLETED -> exit code; FAILED -> exit code/signal; NODE_FAIL, BOOT_FAIL -> node_lost;
//   PREEMPTED -> ExitCause::preempted; TIMEOUT, DEADLINE -> time_limit;
//   OUT_OF_MEMORY -> out_of_memory; CANCELLED -> signal/exit as recorded, detail names who.
// The detail is Slurm's words: "NODE_FAIL (NodeDown) on alpha-n1", "CANCELLED by 0".
//
// In full, for every state of Slurm's job_state_string() (22.05 to 26.05):
//   queued   also POWER_UP_NODE, REQUEUE_FED, REQUEUE_HOLD, RESV_DEL_HOLD, SPECIAL_EXIT ("same
//            as REQUEUE_HOLD": held until released) and STOPPED (like SUSPENDED).
//   exited   "as recorded" means the signal when ExitCode's signal is set, else a non-zero
//            code; a recorded 0:0 sets neither (a job cancelled while pending never ran).
//            COMPLETED without an ExitCode (squeue) is exit code 0. FAILED with
//            Reason=BadConstraints (sbatch refused it; Slurm still keeps a FAILED job under the
//            name) -> ExitCause::launch_failed. CANCELLED -> ExitCause::killed_by_signal
//            (someone outside orchestrate; an orchestrate cancel wins in classify_exit).
//            NODE_FAIL, BOOT_FAIL set node_lost and ExitCause::node_lost. REVOKED (federation:
//            a sibling cluster runs it) records nothing.
//   A state not listed here (a newer Slurm) -> running, with `note` saying so: never "exited",
//   which could start a second copy of a job that is still running.
// detail: "<STATE>[ by <uid>][ (<reason>)][ on <nodes>]", nodes only for NODE_FAIL/BOOT_FAIL.
JobPhase map_job_state(const JobRecord& job);

}  // namespace orch::slurm
