#pragma once
// SlurmSite: a rented Slurm cluster reached through its login node over SSH, driven with
// Slurm's own commands, exactly as a team does by hand. The commands and the parsing of their
// output are in slurm_parse.h, the batch script in batch_script.h; this file only runs them.
//
//   launch   mkdir the run directory, upload job.sh by SFTP, sbatch it (the launch token is the
//            Slurm job name, so the job can always be found again)
//   find     squeue by job name, then the run directory's job_id file (written by the job when
//            it starts), then sacct where the cluster keeps accounting
//   observe  squeue by job name; for a finished job `scontrol show job` (exit code, reason), or
//            sacct once the controller has forgotten it; new output lines read by SFTP from
//            output.log at the caller's offset
//   cancel   scancel by job name (idempotent: nothing to cancel is success)
//
// Every failure to reach the login node is ErrorKind::unreachable (the site is silent, the job
// is not failed); a command that answers but fails (sbatch refusing a request) is not.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "adapters/slurm/slurm_parse.h"
#include "adapters/ssh/ssh_session.h"
#include "scheduler/cluster_port.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

class SlurmSite final : public ClusterPort {
 public:
  SlurmSite(ClusterSpec spec, std::unique_ptr<SshSession> ssh);

  Result<SiteInventory> inventory() override;
  Result<LaunchResult> launch(const LaunchRequest& request) override;
  Result<std::optional<LaunchResult>> find(const std::string& token) override;
  Result<RunObservation> observe(const std::string& token, std::uint64_t output_offset) override;
  Result<void> cancel(const std::string& token) override;
  Result<std::string> read_output(const std::string& token, std::uint64_t offset,
                                  std::size_t max_bytes) override;

  SshSession& ssh() { return *ssh_; }

 private:
  // Runs a Slurm command (argv quoted with shell_command) on the login node. A non-zero exit
  // status is an ErrorKind::io error carrying the command's stderr, unless `allow_failure`.
  Result<ExecResult> run(const std::vector<std::string>& argv, bool allow_failure = false);
  // The newest Slurm job carrying this token, wherever Slurm still remembers it.
  Result<std::optional<slurm::JobRecord>> lookup(const std::string& token);
  Result<std::optional<slurm::JobRecord>> from_squeue(const std::string& token);
  Result<std::optional<slurm::JobRecord>> from_scontrol(const std::string& job_id);
  Result<std::optional<slurm::JobRecord>> from_sacct(const std::string& token);
  // The job id the job wrote into its run directory when it started, if it did.
  Result<std::optional<std::string>> recorded_job_id(const std::string& token);

  ClusterSpec spec_;
  std::unique_ptr<SshSession> ssh_;
  std::mutex mu_;                               // guards the members below
  std::optional<bool> accounting_;              // whether sacct works here; unknown at first
  std::map<std::string, std::string> job_ids_;  // token -> Slurm job id, as learned
};

}  // namespace orch
