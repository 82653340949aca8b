#pragma once
// What a user asks for: parsed from YAML (spec/job_spec_parser.h), stored as JSON with the
// job, and read by placement and the lifecycle. Defaults here are the documented defaults.

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/model/container.h"
#include "scheduler/model/job_shape.h"
#include "scheduler/model/pod_settings.h"
#include "scheduler/model/site_types.h"  // SecretSource
#include "scheduler/model/topology_hint.h"

namespace orch {

struct BackoffSpec {
  double initial_s = 10.0;  // first wait: a user restart, or a second infra failure in a row
  double max_s = 600.0;     // cap on the wait
  double multiplier = 2.0;  // growth per consecutive restart
};

struct RestartPolicy {
  // Restarts after infrastructure failures (site, node, signal) in a row without progress: an
  // attempt that saved a newer checkpoint, or ran healthy_after_s, starts the count again. 0:
  // never restart after one.
  int max_infra_restarts = 10;
  int max_user_restarts = 0;  // restarts after the job's own code failed (non-zero exit), in all
  BackoffSpec backoff;
  // An attempt that ran this long counts as progress even without a newer checkpoint.
  double healthy_after_s = 1800.0;
};

// Model size for MFU. Either flops_per_token directly, or parameters (and optionally
// layers/hidden/sequence for the attention term): 6*N + 12*L*H*S (PaLM, appendix B).
struct ModelSpec {
  std::optional<double> parameters;
  std::optional<double> flops_per_token;
  std::optional<int> layers;
  std::optional<int> hidden;
  std::optional<int> sequence;
};

// What orchestrate does with a job's checkpoints (issue 5): keep the newest `keep` verified ones,
// and hold the newest at `copies` sites (the one that saved it and `copies - 1` others, `to`
// first when named, else chosen by the scheduler). Older checkpoints are deleted only once a
// newer one is verified where the policy wants it; the last verified copy is never deleted.
struct ReplicationSpec {
  bool enabled = true;
  int keep = 3;    // newest verified checkpoints kept (>= 1)
  int copies = 2;  // sites holding the newest verified checkpoint (1: no off-site copy)
  std::string to;  // preferred off-site cluster; empty: the scheduler chooses
};

struct CheckpointSpec {
  // A subdirectory of the job's own checkpoint directory (relative; ORCH_CHECKPOINT_DIR then
  // names it). Specs stored before it had to be relative may hold an absolute one: ignored.
  std::string dir;
  std::string resume_env = "ORCH_RESUME_FROM";  // env var that carries the checkpoint path
  std::optional<int> interval_steps;            // informational: how often the job saves
  ReplicationSpec replicate;
  // Issue 43 (docs/health.md, "I/O stalls"): a save (checkpoint_start to checkpoint) running
  // longer than stall_factor x the job's median save time, and at least stall_min_s, is an
  // io_stall. stall_factor 0: the launch gives the agent no bound (its own, after three saves of
  // the attempt, still holds).
  double stall_factor = 5;
  double stall_min_s = 60;
};

// How orchestrate watches a running attempt (issues 4 and 14, docs/health.md "Hangs").
struct HealthWatchSpec {
  // After the first progress line: silent this long means hung (0: never). Unset: adaptive,
  // max(60 s, 20 x the median step time seen so far).
  std::optional<double> hang_after_s;
  // Before the first progress line: a job that prints no progress line within this long is hung,
  // but only when expect_progress is set. A job that never speaks the protocol is never hung.
  double startup_timeout_s = 1800;
  bool expect_progress = false;
  // A task whose agent heartbeats stop this long while its site answers: node lost, that node.
  // 10 s (heartbeats every 3.3 s) meets the detection goal of issue 38 on the Slurm lab; a
  // login node that stops answering pauses the check rather than tripping it.
  double heartbeat_timeout_s = 10;
  double mfu_drop_percent = 10;  // MFU this far below the attempt's baseline: mfu-drop event
  // A node confirmed a straggler by per-rank step times stops the attempt, which runs again
  // without that node (on the same cluster when it has room). false: only noted.
  bool exclude_stragglers = true;
};

// How the job is asked to make room for a job of higher priority (issue 18,
// docs/scheduling.md): sent `signal` (it saves a checkpoint and prints its line), then stopped
// once that line comes or after grace_s, whichever is first.
struct PreemptionSpec {
  bool allowed = true;          // false: never a victim
  std::string signal = "USR1";  // one of USR1, USR2, INT, HUP (the agent forwards these)
  double grace_s = 300;         // preempt_grace_s: how long it may take to save
};

// Priorities (a job's, a class's) lie in [-kMaxPriority, kMaxPriority].
inline constexpr int kMaxPriority = 1000000;

// The signals a job may name for a save request (without the SIG prefix).
inline bool is_save_signal(std::string_view s) {
  return s == "USR1" || s == "USR2" || s == "INT" || s == "HUP";
}

// A small grid for ablations (`sweep:`, docs/config.md): every combination of the env values,
// times each argument list appended to the command.
struct SweepSpec {
  std::vector<std::pair<std::string, std::vector<std::string>>> env;  // in the file's order
  std::vector<std::string> args;  // each appended to the command (after a space) at one point
  bool empty() const { return env.empty() && args.empty(); }
  // How many jobs the grid makes (1 when empty: the job itself).
  std::size_t points() const {
    std::size_t n = args.empty() ? 1 : args.size();
    for (const auto& [name, values] : env) n *= values.size();
    return n;
  }
};

// `workdir:` a directory of the submitting machine that every task starts in (issue 40,
// docs/config.md). The CLI packs it into a ustar archive, content-addressed by the archive's
// SHA-256, and uploads it once (PUT /api/v1/code/{sha256}); the server fills in sha256 and
// bytes after checking that the archive is there and that the submitter may use it.
struct WorkdirSpec {
  std::string source;      // the path as the spec wrote it (informational once stored)
  std::string sha256;      // lowercase hex of the archive; empty: the job has no workdir
  std::int64_t bytes = 0;  // the archive's size
};

// `after:` a job this one waits for (issue 45, docs/config.md "Dependencies: `after`"): it starts
// once that job succeeded (state succeeded, the default) or ended in any way (state ended), and is
// cancelled when it can no longer succeed.
enum class AfterState { succeeded, ended };
std::string_view to_string(AfterState s);

struct AfterSpec {
  std::string job;  // as written: the job's name (the newest of that name) or its id
  AfterState state = AfterState::succeeded;
  // The job's id, resolved by the brain at submit (0: not yet resolved). Stored with the job.
  std::int64_t id = 0;
  bool operator==(const AfterSpec&) const = default;
};

struct JobSpec {
  std::string name;
  std::string command;  // run under `shell`, once per task (nodes x tasks_per_node)
  std::map<std::string, std::string> env;
  int nodes = 1;
  int gpus_per_node = 1;
  int tasks_per_node = 1;  // processes per node, each with its place in the gang (launch contract)
  // resources.spares: hot spares the cluster it runs on holds for it while it runs, beyond the
  // cluster's own `spares` (issue 38: for the largest gangs). 0: none of its own.
  int spares = 0;
  CheckpointSpec checkpoint;
  ModelSpec model;
  RestartPolicy restart;
  HealthWatchSpec health;
  std::vector<std::string> allowed_clusters;    // empty: any cluster
  std::vector<std::string> preferred_clusters;  // ranked first among those that fit
  // `placement.expected_run:` how long the whole run is expected to take, from its first
  // placement (nullopt: not said; placement then expects it to run as long again as it has).
  // Moves and trials of other clusters are judged over what is left of it (move_worth.h).
  std::optional<double> expected_run_s;
  // An attempt still queued at its site (Slurm PENDING, Kubernetes unschedulable) this long
  // after it was placed moves to a cluster that can run it now, if one can (0: never).
  double max_queue_s = 300;
  // Named datasets the job reads (issue 5). Placement weighs the time to stage each where it is
  // missing; a job placed there waits in `staging` until its copy is verified. The job gets
  // each copy's path in ORCH_DATASET_<NAME> (upper case, '-' and '.' as '_').
  std::vector<std::string> datasets;
  // Who submitted the job (the API token's user; set by the server, never taken from the
  // submitted document) and the team it runs for (optional, from the spec's `team:`).
  std::string owner;
  std::string team;
  // Secrets the job gets in its environment (`secret_env: {VAR: {secret: NAME}}`): the variable
  // and the name of a secret an administrator registered, never its value (docs/security.md).
  // An empty name is a reference of a job stored before secrets were granted by name (it named
  // a file or variable of the server): such a job is never launched with it.
  std::map<std::string, std::string> secret_env;
  // `priority:` an integer, or a class of the clusters file's priority_classes (the brain sets
  // priority from priority_class at submit). Higher is placed first and may preempt lower.
  int priority = 0;
  std::string priority_class;
  // `kubernetes:` what this job's pods get on a Kubernetes cluster, over the cluster's own
  // settings (image, volumes, shm_size, ...; scheduler/model/pod_settings.h). Other providers
  // ignore it.
  PodSettings kubernetes;
  // `topology:` keep the gang's nodes close (Kueue's topology-aware scheduling on Kubernetes,
  // sbatch --switches on Slurm; scheduler/model/topology_hint.h). Empty: no hint.
  TopologyHint topology;
  // `container:` the image its tasks run in, with mounts, a workdir inside and variables passed
  // through (scheduler/model/container.h): run by the clusters that declare a runtime
  // (slurm.containers: pyxis or apptainer; local.containers: apptainer) and by Kubernetes (as
  // the pods' image). Empty image: none.
  ContainerSpec container;
  PreemptionSpec preemption;
  // `time_limit:` how long an attempt may hold its GPUs, counted from its placement (seconds,
  // or a number with a unit: "90m", "2h", "1d"). Unset: as long as it runs. A job that declares
  // it may use GPUs held for a waiting bigger job when it ends before that job can start
  // (backfill, docs/scheduling.md); an attempt still running at its limit is stopped
  // (time_limit: it resumes from its checkpoint, as after a provider's time limit).
  std::optional<double> time_limit_s;

  // Issue 40. `shell:` what the command runs under: "bash", "sh" or "bash-login" (bash -l -c);
  // "" (unset): bash where the node has it, else sh (scheduler/model/job_shape.h).
  std::string shell;
  // resources.cpus_per_task (sbatch --cpus-per-task; 0: not said) and resources.memory per
  // node in MiB (sbatch --mem; 0: not said). Placement checks them where a site reports its
  // nodes' CPUs and memory.
  int cpus_per_task = 0;
  std::int64_t memory_mb = 0;
  // `slurm:` the job's partition, account, qos, reservation, constraint and exclusive, over its
  // cluster's (a cluster may pin or forbid each: SlurmSpec::job_options). Others ignore it.
  SlurmJobOptions slurm;

  // `group:` a label that `job list --group` filters on; each point of a sweep gets the
  // spec's name as its group.
  std::string group;
  // `sweep:` a grid of env values and command arguments; a submitted sweep becomes one job
  // per point, named <name>-1, <name>-2, ... (spec/sweep.h). Empty for every stored job.
  SweepSpec sweep;
  // The values of the sweep point this job is (`LR=1e-4 --seed 1`: its sweep.env values in the
  // file's order, then its sweep.args), set by expand_sweep; "" for a job not in a sweep. Stored
  // with the job, never read from a submitted spec.
  std::string sweep_point;
  // `workdir:` the code the job runs in (see WorkdirSpec); sha256 empty: none (the attempt
  // starts in its own empty run directory).
  WorkdirSpec workdir;
  // `setup:` commands run before the first task starts on a cluster, once per (cluster, workdir
  // hash, setup text, container), in the workdir (a YAML list of lines is joined with "\n").
  // Empty: none.
  std::string setup;
  // `setup_per_node: true` runs setup on every node of the attempt instead of one.
  bool setup_per_node = false;

  // `after:` the jobs it waits for (see AfterSpec); empty: it waits for none.
  std::vector<AfterSpec> after;

  int total_gpus() const { return nodes * gpus_per_node; }
  // time_limit_s in whole milliseconds (rounded up), when it has one.
  std::optional<std::int64_t> time_limit_ms() const {
    if (!time_limit_s) return std::nullopt;
    return static_cast<std::int64_t>(std::ceil(*time_limit_s * 1000.0));
  }
};

// FLOPs per token the model needs for one training step (forward + backward), or nullopt
// when the spec gives no size.
std::optional<double> model_flops_per_token(const ModelSpec& model);

}  // namespace orch
