#pragma once
// LocalSite: a "site" backed by this machine, the embedded default provider for the demo and
// the tests. Each attempt is one orchestrate-agent process group per task (nodes x
// tasks_per_node; local_gang.cpp) in its own run directory under <root>/runs/<token>; all state
// lives on disk (see adapters/local/README.md), so a new LocalSite
// on the same root (a restarted server) picks up where the old one left off.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "adapters/local/gpu_slots.h"
#include "adapters/local/run_dir.h"
#include "scheduler/cluster_port.h"
#include "scheduler/model/gang_verdict.h"
#include "scheduler/model/live_watch_spec.h"
#include "scheduler/site_factory.h"

namespace orch {

// What a local job takes of the server's own environment (docs/security.md): what a program
// needs to find its tools and speak the locale, never the server's secrets. Anything else a job
// needs goes in its spec's env. LC_* variables pass too.
inline constexpr const char* kInheritedVariables[] = {
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM"};

struct LocalSiteOptions {
  std::string name = "local";
  std::string root;       // the site's directory; created on first launch
  int nodes = 1;          // virtual nodes, named <name>-n0, <name>-n1, ...
  int gpus_per_node = 1;  // reported by inventory()
  // The cluster's accelerator. Anything but cpu-slot is a real GPU box (gpu_slots.h): each task
  // gets CUDA_VISIBLE_DEVICES from the device indexes its attempt holds, which no other live
  // run of the site holds; cpu-slot sets nothing.
  std::string accelerator = "cpu-slot";
  // The program that counts this machine's GPUs for the preflight (no '/': looked up in PATH).
  std::string nvidia_smi = "nvidia-smi";
  std::string agent_path;                 // the orchestrate-agent executable
  std::int64_t cancel_grace_ms = 10'000;  // after this, a repeated cancel kills the group
  // local.run_as: the user the jobs' processes run as (this process must be root; the agent
  // stays root). "": this process's own user. With it, the run directories, the checkpoint and
  // dataset directories are made searchable by that user and the job's own are given to it
  // (run_as.h).
  std::string run_as;
  std::string checkpoints_dir;  // the cluster's checkpoint root; "": <root>/checkpoints
  std::string datasets_dir;     // the cluster's dataset root; "": <root>/datasets
  // local.containers (issue 40): apptainer runs a job's `container:` (`apptainer exec` under the
  // agent: the code's extraction, the setup and the job in the image); none refuses such a job.
  ContainerRuntime containers = ContainerRuntime::none;
  // The cluster's live_watch (issue 43): the agent's watch of the node while each task runs.
  LiveWatchSpec live_watch;
};

class LocalSite final : public ClusterPort {
 public:
  explicit LocalSite(LocalSiteOptions options);

  Result<SiteInventory> inventory() override;
  Result<LaunchResult> launch(const LaunchRequest& request) override;
  Result<std::optional<LaunchResult>> find(const std::string& token) override;
  Result<RunObservation> observe(const std::string& token, std::uint64_t output_offset) override;
  Result<void> cancel(const std::string& token) override;
  Result<void> signal(const std::string& token, const std::string& signal) override;
  Result<std::string> read_output(const std::string& token, std::uint64_t offset,
                                  std::size_t max_bytes) override;
  Result<void> set_outage(bool down) override;
  // Runs `<agent_path> probe` once per requested virtual node, one after the other (see
  // local_site_probe.cpp); the probe directory defaults to <root>/probe.
  Result<std::vector<ProbeResult>> probe_nodes(const ProbeRequest& request) override;
  // Storage is this host's filesystem: the scripts of adapters/storage run here through
  // /bin/sh (local_site_storage.cpp). Unreachable during a simulated outage.
  Result<Manifest> manifest(const ManifestRequest& request) override;
  Result<void> remove_path(const RemoveRequest& request) override;
  // The site's directory writable, the agent executable, run_as known, and on a GPU site the
  // machine's GPU count against the site's (local_site_preflight.cpp).
  std::vector<PreflightCheck> preflight() override;

  // With run_as: makes the site's directories (runs/, the checkpoint and dataset roots, and any
  // missing directory above them, mode 0701) and lets others search those it owns; nothing
  // without it. make_local_site calls it before the site does anything else: probes and copies
  // make directories of their own, owner-only under the server's umask, which the job's user
  // could not go through (local_site_run_as.cpp).
  Result<void> prepare_storage();

  // On a GPU site whose count differs from what nvidia-smi lists (or that cannot be asked),
  // one "orchestrate: WARNING: ..." line on stderr (a missing nvidia-smi is said once per
  // process); nothing on a cpu-slot site or when the counts agree. The preflight's "gpus" line
  // says the same (local_site_gpus.cpp).
  void warn_about_gpus() const;
  // The preflight's "gpus" line; nullopt on a cpu-slot site.
  std::optional<PreflightCheck> gpu_check() const;

  const LocalSiteOptions& options() const { return options_; }
  // The run directory of a token (whether or not it exists), for logs and tests.
  std::string run_dir(const std::string& token) const;

 private:
  Result<void> check_up() const;
  bool is_node_of_site(const std::string& node) const;
  Result<std::vector<std::string>> assign_nodes(const LaunchRequest& request) const;
  // local_site_gpus.cpp: where a new launch runs: its nodes and, on a GPU site, its devices
  // (none another live run holds; ErrorKind::conflict, naming the holders, when too few are free).
  Result<local::StoredRequest> place(const LaunchRequest& request) const;
  bool assigns_gpus() const;
  // The device indexes held by the site's live runs (any task's agent alive), from their
  // request.json: what survives a restart of the server.
  Result<local::HeldGpus> held_gpus() const;
  Error no_free_gpus(const LaunchRequest& request, const local::HeldGpus& held) const;
  // The job's own CUDA_VISIBLE_DEVICES is replaced by the site's: one line in its output says so.
  void note_replaced_devices(const local::StoredRequest& run) const;
  Result<LaunchResult> existing_launch(const std::string& token) const;
  // existing_launch as launch() returns it for a token the site already has: adopted.
  Result<LaunchResult> adopted_launch(const std::string& token) const;
  // The run directory exists but its agent never started (a crash mid-launch).
  Result<bool> never_started(const local::RunPaths& paths) const;
  // Starts every task of the launch whose agent never started (all of them on a first launch).
  Result<LaunchResult> start_tasks(const local::StoredRequest& run, bool adopted);
  // `task_env` (a task's own: CUDA_VISIBLE_DEVICES on a GPU site) goes last.
  std::vector<std::string> job_environment(
      const LaunchRequest& request, const std::string& dir, const std::vector<std::string>& nodes,
      const std::map<std::string, std::string>& task_env) const;
  // local_site_run_as.cpp: with run_as, what the job's user must reach, made reachable and
  // checked as that user before any task starts; nothing without it.
  Result<void> prepare_for_job_user(const LaunchRequest& request, const local::RunPaths& paths);
  std::string checkpoints_dir() const;
  std::string datasets_dir() const;
  // The run's stored request (what was launched and on which nodes).
  Result<local::StoredRequest> stored_request(const local::RunPaths& paths) const;
  // Tasks of the run by its stored request; 1 when that cannot be read.
  int run_task_count(const local::RunPaths& paths) const;

  // local_gang.cpp: the tasks of one launch.
  static int task_count(const LaunchRequest& request);
  // The words that run a task's command in the job's image (local.containers: apptainer); none
  // without a container; ErrorKind::invalid when this site runs no containers.
  Result<std::vector<std::string>> container_prefix(const LaunchRequest& request,
                                                    const std::string& work) const;
  Result<bool> task_never_started(const local::TaskPaths& task) const;
  Result<pid_t> start_task(const local::StoredRequest& run, int rank);
  Result<std::vector<TaskView>> task_views(const local::RunPaths& paths,
                                           const local::StoredRequest& stored) const;
  Result<void> kill_task(const local::TaskPaths& task, int sig) const;
  // Signals every live task, then waits up to `wait` for them to be gone.
  Result<void> kill_tasks(const local::RunPaths& paths, int count, int sig,
                          std::chrono::milliseconds wait) const;
  // The run's phase from its tasks; ends the gang (and kills the survivors) on a failure.
  Result<GangVerdict> judge_run(const local::RunPaths& paths, const local::StoredRequest& stored);
  std::vector<std::string> node_names() const;

  LocalSiteOptions options_;
  // Serialises launch, cancel and outage: the check-then-act steps on a run directory (does it
  // exist, is the agent alive, was a cancel already sent) must not interleave between threads.
  // Reads (observe, find, read_output) need no lock: they only read files written atomically.
  std::mutex mutex_;
  // One probe round at a time: rounds share this machine's CPUs and disk, so two at once would
  // measure each other. Separate from mutex_: a round takes seconds and must not hold up
  // launches and cancels.
  std::mutex probe_mutex_;
};

// The SiteMaker of provider local: virtual nodes under the cluster's storage root.
Result<std::unique_ptr<ClusterPort>> make_local_site(const ClusterSpec& cluster,
                                                     const SiteContext& context);

}  // namespace orch
