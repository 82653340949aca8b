#pragma once
// SlurmSite: a rented Slurm cluster reached through its login node over SSH, driven with
// Slurm's own commands, exactly as a team does by hand. The commands and the parsing of their
// output are in slurm_parse.h, the batch script in batch_script.h; this file only runs them.
//
//   launch   find the token first (a job Slurm already has is returned adopted, nothing is
//            submitted); else mkdir the run directory (which also writes the gang file and
//            checks the agent), upload the agent by SFTP when the cluster lacks this build of
//            it, upload job.sh, sbatch it (the launch token is the Slurm job name, so the job
//            can always be found again); every task runs under the agent (batch_script.h)
//   find     squeue by job name, then the run directory's job_id file (written by the job when
//            it starts), then sacct where the cluster keeps accounting
//   observe  squeue by job name, and in the same command each task's newest agent record
//            (observe_command.h); for a finished job `scontrol show job` (exit code, reason),
//            or sacct once the controller has forgotten it; new output lines read by SFTP from
//            output.log at the caller's offset. The tasks' records (task_events.h): a task
//            silent for heartbeat_timeout_s while the job is RUNNING ends the attempt as
//            node_lost on that task's node (the node_lost marker written, then scancel, in one
//            command); the marker wins over what Slurm says afterwards; a failed job names the
//            node of the task that failed first (ExitStatus::failed_node)
//   observe_many  a poll round: the same answers with ONE squeue for all the tokens
//            (`--name=a,b,c`, with every run directory's task records), scontrol only for the jobs
//            it shows ended (one job id per call: scontrol takes no list), one sacct (`--name=a,b`)
//            for those Slurm has forgotten; the output is still read per running attempt (SFTP, no
//            command)
//   cancel   scancel by job name (idempotent: nothing to cancel is success)
//   probe    upload the server's orchestrate-agent once per build (SFTP), then one srun job
//            with one `orchestrate-agent probe` task per node (probe_command.h)
//
// Every failure to reach the login node is ErrorKind::unreachable (the site is silent, the job
// is not failed); a command that answers but fails (sbatch refusing a request) is not.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "adapters/slurm/agent_binary.h"
#include "adapters/slurm/batch_script.h"
#include "adapters/slurm/slurm_parse.h"
#include "adapters/slurm/task_events.h"
#include "adapters/ssh/ssh_session.h"
#include "scheduler/cluster_port.h"
#include "scheduler/site_factory.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

struct SlurmSiteOptions {
  // The orchestrate-agent executable on this machine that launch and probe_nodes ship to the
  // cluster (it must run there: same architecture, libc only). Empty: beside this program,
  // <directory of /proc/self/exe>/orchestrate-agent.
  std::string agent_path;
};

class SlurmSite final : public ClusterPort {
 public:
  SlurmSite(ClusterSpec spec, std::unique_ptr<SshSession> ssh, SlurmSiteOptions options = {});

  Result<SiteInventory> inventory() override;
  Result<LaunchResult> launch(const LaunchRequest& request) override;
  Result<std::optional<LaunchResult>> find(const std::string& token) override;
  Result<RunObservation> observe(const std::string& token, std::uint64_t output_offset) override;
  // One squeue for every token (and sacct for those it no longer lists): what observe() answers
  // for each, in order. Tokens that cannot be listed (not launch tokens) are asked one by one;
  // an answer of squeue or sacct that cannot be read is asked again token by token.
  std::vector<Result<RunObservation>> observe_many(
      const std::vector<ObserveRequest>& requests) override;
  Result<void> cancel(const std::string& token) override;
  Result<void> signal(const std::string& token, const std::string& signal) override;
  Result<std::string> read_output(const std::string& token, std::uint64_t offset,
                                  std::size_t max_bytes) override;
  // One srun job, one probe task per node (slurm_site_probe.cpp). Nodes that sinfo does not
  // show as up are not probed (and so have no result); request.nodes naming a node the cluster
  // does not have is ErrorKind::invalid.
  Result<std::vector<ProbeResult>> probe_nodes(const ProbeRequest& request) override;
  Result<std::vector<FabricPairResult>> fabric_round(const FabricRoundRequest& request) override;
  // Storage on the cluster's shared filesystem, as the login node sees it: the scripts of
  // adapters/storage (find, stat, sha256sum; rm -rf) run over SSH (slurm_site_storage.cpp).
  // They run on a second SshSession of this site's own (same spec; the host key pinned to the
  // one the main session saw, if it connected first), opened on first use, so that hashing tens
  // of GB never holds up launch, observe or cancel. Deadlines: ssh.command_timeout_s for a
  // listing without hashes; hashing and deleting first list without hashes, then get
  // command_timeout_s plus the bytes at 20 MB/s, or plus 5 ms per file (past it: unreachable,
  // as every SSH timeout).
  Result<Manifest> manifest(const ManifestRequest& request) override;
  Result<void> remove_path(const RemoveRequest& request) override;
  // The login node's port, the key file, SSH, sinfo, partition, account, QoS, rsync, the storage
  // root from a compute node, the agent (slurm_site_preflight.cpp).
  std::vector<PreflightCheck> preflight() override;

  SshSession& ssh() { return *ssh_; }

  // What this site has asked its login node on the main SSH session, for tests and
  // measurements: commands by program (squeue, scontrol, sacct, sinfo, scancel, sbatch, and
  // "mkdir" for a launch's run directory) and SFTP file reads. A probe round's own exec (srun,
  // the agent check) and the storage session are not counted.
  struct RemoteCalls {
    std::map<std::string, std::uint64_t> commands;
    std::uint64_t file_reads = 0;
    std::uint64_t commands_total() const;
  };
  RemoteCalls remote_calls();
  const SlurmSiteOptions& options() const { return options_; }

 private:
  // Runs a Slurm command (argv quoted with shell_command) on the login node. A non-zero exit
  // status is an ErrorKind::io error carrying the command's stderr, unless `allow_failure`.
  Result<ExecResult> run(const std::vector<std::string>& argv, bool allow_failure = false);
  // The same for a command line already quoted, counted as `program`.
  Result<ExecResult> run_line(const std::string& program, const std::string& command,
                              bool allow_failure = false);
  // A poll's reading of one run directory's task records, with the cluster's clock then.
  struct TaskReading {
    slurm::TaskSnapshot snapshot;
    std::optional<std::int64_t> now_ms;
  };
  using TaskReadings = std::map<std::string, TaskReading>;
  // The newest Slurm job carrying this token, wherever Slurm still remembers it.
  Result<std::optional<slurm::JobRecord>> lookup(const std::string& token);
  Result<std::optional<slurm::JobRecord>> from_squeue(const std::string& token);
  Result<std::optional<slurm::JobRecord>> from_scontrol(const std::string& job_id);
  Result<std::optional<slurm::JobRecord>> from_sacct(const std::string& token);
  // lookup() for many launch tokens, with one squeue (and one sacct) per kNamesPerQuery tokens.
  // The outer error: squeue failed or answered something unreadable. Inside, each token's
  // lookup; after an unreachable answer nothing more is asked (the tokens not yet answered get
  // that error too).
  // The squeue also reads each token's task records into `readings` (observe_command.h).
  using Lookups = std::map<std::string, Result<std::optional<slurm::JobRecord>>>;
  Result<Lookups> lookup_many(const std::vector<std::string>& tokens, TaskReadings* readings);
  // The newest job of each token in sacct (none where the cluster keeps no accounting).
  Result<std::map<std::string, slurm::JobRecord>> from_sacct_many(
      const std::vector<std::string>& tokens);
  // The observation of a token whose job lookup() found (or not), judged by its tasks' records
  // when they were read: its output read by SFTP.
  Result<RunObservation> observed(const std::string& token, std::uint64_t output_offset,
                                  const std::optional<slurm::JobRecord>& job,
                                  const TaskReading* tasks);
  // The rules of task_events.h applied to `obs` (slurm_site_tasks.cpp): the marker, a silent
  // task (which writes the marker and cancels the job first), the node of a failed job.
  Result<void> judge_tasks(const std::string& token, const std::optional<slurm::JobRecord>& job,
                           const TaskReading& tasks, RunObservation& obs);
  // Writes the node_lost marker and cancels the job; true once both are done.
  Result<bool> end_for_lost_node(const std::string& token, const slurm::NodeLostMarker& lost);
  void count_command(const std::string& program);
  Result<std::string> read_remote(const std::string& path, std::uint64_t offset,
                                  std::size_t max_bytes);
  // The job id the job wrote into its run directory when it started, if it did.
  Result<std::optional<std::string>> recorded_job_id(const std::string& token);

  // The agent to ship, read (and hashed) again only when the file changed (guarded by agent_mu_).
  Result<std::shared_ptr<const slurm::AgentBinary>> local_agent();
  // The run directory, the gang file, the agent (uploaded unless the cluster has this build),
  // job.sh: everything before sbatch.
  Result<void> prepare_launch(const slurm::BatchPlan& plan, const std::string& remote_agent,
                              const slurm::AgentBinary& agent);
  // Uploads the agent unless the cluster has it; creates the probe directory. Its remote path.
  Result<std::string> ship_agent(const std::string& probe_dir);
  // The preflight's checks past SSH, appended to `out`; the agent's upload and run.
  void preflight_slurm(std::vector<PreflightCheck>& out);
  PreflightCheck agent_check();
  // `what` ("account", "qos") as sacctmgr lists it with `command` (judge_association).
  PreflightCheck association_check(const std::string& what, const std::string& key,
                                   const std::string& wanted, const Result<std::string>& command);
  // The nodes a round probes (request.nodes or all) that sinfo shows up, and the fewest GPUs
  // one of them has.
  struct ProbeTargets {
    std::vector<std::string> nodes;
    int gpus_per_node = 0;
  };
  Result<ProbeTargets> probe_targets(const ProbeRequest& request);

  // The storage session, made on first use (guarded by storage_mu_).
  SshSession& storage_ssh();

  ClusterSpec spec_;
  std::unique_ptr<SshSession> ssh_;
  std::mutex storage_mu_;
  std::unique_ptr<SshSession> storage_ssh_;
  SlurmSiteOptions options_;
  std::mutex probe_mu_;  // one probe round at a time
  std::mutex agent_mu_;  // guards agent_ (launch and probes both ship it)
  std::shared_ptr<const slurm::AgentBinary> agent_;
  std::mutex mu_;                               // guards the members below
  std::optional<bool> accounting_;              // whether sacct works here; unknown at first
  std::map<std::string, std::string> job_ids_;  // token -> Slurm job id, as learned
  RemoteCalls calls_;
};

// The SiteMaker of provider slurm: sbatch and squeue through an SSH session to the login node.
Result<std::unique_ptr<ClusterPort>> make_slurm_site(const ClusterSpec& cluster,
                                                     const SiteContext& context);

}  // namespace orch
