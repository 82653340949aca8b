#pragma once
// The values a site worker and a provider exchange through ClusterPort (scheduler/cluster_port.h):
// what to launch, what a site reports of an attempt and of its nodes, what to list or probe.
// Plain data with no behaviour, so the model, the brain's events and the adapters can all name
// them without depending on the port.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/model/container.h"
#include "scheduler/model/gpu_probe_options.h"
#include "scheduler/model/job_shape.h"
#include "scheduler/model/job_state.h"
#include "scheduler/model/manifest.h"
#include "scheduler/model/pod_settings.h"
#include "scheduler/model/topology_hint.h"

namespace orch {

// Where a secret an administrator configured comes from, on the server (the clusters file's
// `secrets:` and webhook keys; docs/security.md): exactly one of a regular file's content (its
// one trailing newline dropped) or a variable of the server's own environment. Never from a
// job spec: a job names a registered secret only.
struct SecretSource {
  std::string file;  // an absolute path on the server
  std::string env;   // a variable of the server's environment
};

// A checkpoint the attempt may resume from, with the manifest it was registered with. The site
// worker checks candidates newest first against what the site holds, just before the launch,
// and resumes from the first that matches: a corrupt or partial copy is never used.
struct ResumeCandidate {
  std::int64_t checkpoint_id = 0;
  std::int64_t step = 0;
  std::string path;  // at the launch site
  Manifest manifest;
  std::string within;  // the directory the copy must lie in there (ManifestRequest::within)
  // A copy on this node's own disk (tiered checkpoints, issue 38): resuming from it starts the
  // job on that node (LaunchRequest::on_node). Empty: on the site's shared storage.
  std::string node;
};

struct LaunchRequest {
  std::string token;  // unique per attempt, e.g. "orch-7-2-5f3a9c"
  std::int64_t job_id = 0;
  int attempt_no = 0;
  std::string job_name;
  std::string command;                     // run under `shell` (job_shell_argv)
  std::map<std::string, std::string> env;  // includes the resume variable when resuming
  // The job's secret_env: variable -> registered secret's name (kept in the outbox; an empty
  // name is a retired reference that is never launched), the job's team (whose grant the site
  // worker checks again at launch), and the values the site worker resolved just before the
  // launch (never serialised: not in the outbox, request.json or any event). Adapters give the
  // values to the job's processes only.
  std::map<std::string, std::string> secret_refs;
  std::string team;
  std::map<std::string, std::string> secret_env;
  int nodes = 1;
  int gpus_per_node = 1;
  // Tasks started on each node (docs/launch-contract.md): nodes x tasks_per_node tasks in all,
  // each under its own agent with its place in the gang in its environment.
  int tasks_per_node = 1;
  std::vector<std::string> exclude_nodes;
  // Start the job on this node (its first task there): set by the site worker when the resume
  // check chose a copy on that node's own disk. Empty: wherever the site grants.
  std::string on_node;
  // The launch must get these nodes as well (a gang that lost a node: its surviving nodes and
  // the hot spares it takes, issue 38), at most `nodes` of them with on_node. Empty: any.
  std::vector<std::string> include_nodes;
  // No progress line for this long means the job hangs (the agent notes it in its event file;
  // the brain acts on it). 0: never.
  double hang_after_s = 600.0;
  // Each task's agent writes a heartbeat this often; a task whose heartbeats stop for
  // heartbeat_timeout_s while the site itself answers ends the attempt as node_lost, naming
  // that task's node. 0: no heartbeats (and no such check).
  double heartbeat_s = 10.0 / 3;
  double heartbeat_timeout_s = 10.0;
  // Issue 43: a checkpoint save (checkpoint_start to checkpoint) running longer than this is an
  // io_stall (the agent's --io-stall-after-s; the brain's io_stall_after_s()). 0: no bound from
  // the launch (the agent's own, from the attempt's first saves, still holds).
  double io_stall_after_s = 0;
  // Newest first. Empty: start from the beginning (or from env's resume variable, if set).
  std::vector<ResumeCandidate> resume_candidates;
  std::string resume_env = "ORCH_RESUME_FROM";  // the variable that carries the chosen path
  // The oldest step worth resuming from here (issue 15): a newer checkpoint is verified at
  // another site, and resuming from an older one would redo more than copying it takes. When
  // the check leaves only candidates below it, the launch is not made (ResumeChoice::bounced)
  // and the brain stages the newer copy first. Why, for the job's events.
  std::optional<std::int64_t> resume_floor_step;
  std::string resume_floor_reason;
  // The job's time_limit (backfill): the brain stops the attempt once it has passed since its
  // placement; a site that enforces limits itself is told too (Slurm: sbatch --time).
  std::optional<double> time_limit_s;
  // The job's own Kubernetes pod settings (its `kubernetes:` section); a Kubernetes site
  // merges them over its cluster's. Other providers ignore them.
  PodSettings pod;
  // The job's `topology:` hint: a Kubernetes site writes Kueue's topology annotation from its
  // level, a Slurm site passes --switches from its switches.
  TopologyHint topology;
  // Issue 40: the job's shell (JobSpec::shell; job_shell_argv), its CPUs per task and memory
  // per node in MiB (0: not said), and its own `slurm:` options, which a Slurm site merges over
  // its cluster's.
  std::string shell;
  // Issue 40, item 4: the image the job's tasks run in (scheduler/model/container.h), run as the
  // site's cluster declares (pyxis, apptainer, the pods' image). Empty image: none.
  ContainerSpec container;
  int cpus_per_task = 0;
  std::int64_t memory_mb = 0;
  SlurmJobOptions slurm;
  // Issue 40, items 1 and 2 (scheduler/model/workdir.h): the job's code, staged at the site as
  // code_archive (<storage_root>/code/<sha256>.tar) and extracted once into workdir
  // (<storage_root>/code/<sha256>), where every task starts (ORCH_WORKDIR). code_sha256 empty:
  // no workdir (tasks start in the attempt's run directory).
  std::string code_sha256;
  std::int64_t code_bytes = 0;
  std::string code_archive;
  std::string workdir;
  // `setup:` run in workdir before the first task, once per setup_key (cluster, code hash, setup
  // text, container) under setup_dir (<storage_root>/setup/<setup_key>: its lock, log and done
  // marker); on every node when setup_per_node. Empty setup: none.
  std::string setup;
  bool setup_per_node = false;
  std::string setup_key;
  std::string setup_dir;
  // The job's own checkpoint directory at this site (<checkpoints_dir>/job-<id>, or a
  // subdirectory of it the spec's checkpoint.dir names; model/checkpoint_dir.h), exported as
  // ORCH_CHECKPOINT_DIR. The provider creates it (mode 0700, never through a symbolic link)
  // before the job starts. Empty in launches written before it existed: nothing is created.
  std::string checkpoint_dir;
};

// The nodes a launch must get: on_node first, then include_nodes, each once.
inline std::vector<std::string> pinned_nodes(const LaunchRequest& r) {
  std::vector<std::string> out;
  if (!r.on_node.empty()) out.push_back(r.on_node);
  for (const auto& n : r.include_nodes) {
    bool seen = false;
    for (const auto& o : out) seen = seen || o == n;
    if (!seen && !n.empty()) out.push_back(n);
  }
  return out;
}

struct LaunchResult {
  std::string site_job_id;         // provider's id (local: agent pid; Slurm: job id)
  std::vector<std::string> nodes;  // nodes the attempt got, when known at launch
  // What the site was asked to run, for the job's events (Slurm: the sbatch command line with
  // its --exclude). Empty when the provider has nothing useful to show.
  std::string submit_command;
  // The site already had this token: launch() returned that earlier launch and started nothing
  // (a launch retried after a crash). Set by launch() only; find() leaves it false.
  bool adopted = false;
};

// What the pre-launch check found (filled by the site worker, not the provider).
struct RejectedCheckpoint {
  std::int64_t checkpoint_id = 0;
  std::int64_t step = 0;
  bool missing = false;  // gone from the site (else present but different)
  std::string why;       // "file model.bin: SHA-256 ..., expected ..."
  bool outside = false;  // it resolves outside the directory it must lie in (never used again)
};
struct ResumeChoice {
  std::optional<std::int64_t> checkpoint_id;  // none: starts from the beginning
  std::int64_t step = 0;
  std::string path;
  std::string node;  // a copy on that node's own disk: the launch starts there (on_node)
  std::vector<RejectedCheckpoint> rejected;  // newer candidates that failed the check
  // The best that passed is below the request's resume_floor_step: nothing was launched.
  bool bounced = false;
};

enum class RunPhase {
  queued,  // accepted by the site, not yet running
  running,
  exited,
  unknown,  // the site does not know this token (never launched, or purged)
};

struct ExitStatus {
  std::optional<int> exit_code;  // set when the process exited normally
  std::optional<int> signal;     // set when a signal killed it
  std::string detail;            // provider's words (Slurm state, pod reason), may be empty
  bool node_lost = false;        // the provider says the node failed under it
  // The cause when the provider states it (Slurm PREEMPTED, TIMEOUT, OUT_OF_MEMORY); it wins
  // over what the exit code and signal would suggest, but not over a cancel orchestrate sent.
  std::optional<ExitCause> cause;
  // The node of the task that failed first (a gang ends when one task fails), when the
  // provider knows it; empty otherwise. With node_lost, only this node is blamed.
  std::string failed_node;
  // The rank of that task, when the provider knows it (a gang's verdict): with failed_node, which
  // of the attempt's tagged output lines are the failing task's (lifecycle/error_excerpt.h).
  std::optional<int> failed_rank;
  // When the site last heard from the task that failed (its agent's last record), when it
  // knows: with the attempt's last progress line, where the scorecard's detection starts.
  std::optional<std::int64_t> last_heard_ms;
};

// Something a task's agent saw that the brain raises without ending the attempt (issue 43): an
// io_stall, a save that ran past its bound, from the task's newest record while it lasts.
struct TaskAlert {
  std::string kind;  // "io_stall"
  std::string node;
  int rank = -1;  // the task's rank in its gang; -1: a task alone
  // "the save of step 40 to /ckpt/job-7/step-40.pt has run 130 s (bound 100 s) on nfs4 /ckpt"
  std::string detail;
  std::int64_t step = 0;
  std::string path;   // the checkpoint being saved
  std::string fs;     // the filesystem's type ("nfs4", "lustre"); "" unknown
  std::string mount;  // its mount point; "" unknown
  double running_s = 0;
  double after_s = 0;      // the bound it passed
  std::int64_t at_ms = 0;  // when the agent raised it
};

struct RunObservation {
  RunPhase phase = RunPhase::unknown;
  std::optional<ExitStatus> exit;  // set when phase == exited
  std::string site_job_id;
  std::vector<std::string> nodes;
  // New complete stdout lines since the offset the caller passed, and the offset to pass next.
  std::vector<std::string> new_lines;
  std::uint64_t next_offset = 0;
  // A running attempt's alerts, each task's (TaskAlert): raised again at every poll while they
  // last; the brain counts each save once.
  std::vector<TaskAlert> alerts;
  // While queued: why the site holds it back, in the site's own words (Kubernetes: Kueue's
  // message on the Workload, or the scheduler's Unschedulable message; Slurm: squeue's reason);
  // "" when it says nothing. Untrusted text: the brain shows it only through shown_words
  // (scheduler/common/utf8.h), at most kSiteWordsMax bytes.
  std::string waiting;
};

// The most of a site's words (RunObservation::waiting) a job's reason shows.
inline constexpr std::size_t kSiteWordsMax = 512;

// One attempt to look at in a poll round (observe_many).
struct ObserveRequest {
  std::string token;
  std::uint64_t output_offset = 0;
};

struct NodeInfo {
  std::string name;
  int gpus = 0;
  bool healthy = true;
  std::string reason;  // why not healthy, in the provider's words
  // GPUs of the node that jobs hold as the site reports them, every tenant's (ours included;
  // 0 where the site does not say): what placement subtracts beyond our own attempts.
  int gpus_busy = 0;
  // The node's CPUs and memory in MiB as the site reports them (Slurm: sinfo's CPUs and
  // Memory); 0 where it does not say. Placement checks a job's cpus_per_task and memory.
  int cpus = 0;
  std::int64_t memory_mb = 0;
};

struct SiteInventory {
  std::vector<NodeInfo> nodes;
};

// Runs `orchestrate-agent probe` once on each named node (burn-in, or the check that releases a
// quarantined node). On Slurm one job with one task per node; locally one probe per virtual node.
// Lists a checkpoint or dataset copy at the site: every file's size, and the SHA-256 of all
// of them, none, or the named ones (an audit samples).
struct ManifestRequest {
  std::string path;
  enum class Hash { all, none, listed } hash = Hash::all;
  std::vector<std::string> hash_files;  // relative paths, for Hash::listed
  // The directory the copy must lie in (a job's checkpoint directory, orchestrate's replica
  // directory): when set, the site resolves symbolic links and answers ErrorKind::forbidden,
  // listing nothing, when the copy is not strictly inside it. Empty: not confined (datasets a
  // person registered).
  std::string within;
};

// Deletes a copy (retention): `path` must lie strictly inside `within` after the site resolved
// symbolic links, else nothing is deleted (ErrorKind::forbidden); a link is removed, never
// followed. An empty `within` is refused (ErrorKind::invalid).
struct RemoveRequest {
  std::string path;
  std::string within;
};

struct ProbeRequest {
  std::string token;                 // unique per burn-in round, like a launch token
  std::vector<std::string> nodes;    // empty: every node of the site
  std::string dir;                   // filesystem to measure; empty: the site's checkpoint root
                                     // (else its storage root)
  std::int64_t io_bytes = 64 << 20;  // written, fsynced and read back per node
  double compute_s = 1.0;            // wall time of the GEMM benchmark per node
  double timeout_s = 300.0;          // the whole round
  GpuProbeOptions gpu;               // nvidia-smi, the GPU count, DCGM, torch (issue 43)
};

}  // namespace orch
