#pragma once
// Issue 40, items 3 and 5: the shell a job's command runs under (`shell:`) and the Slurm shape
// of its allocation (resources.cpus_per_task, resources.memory and the job's `slurm:` section).
// Validated where they are read (scheduler/spec); carried in JobSpec and LaunchRequest; written
// by the adapters (job_shell_argv for every provider, the sbatch options for Slurm).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "scheduler/common/result.h"

namespace orch {

// `shell:` the values a job may name; "" (unset) is the default: bash where the node has it, sh
// otherwise, decided on the node when the task starts.
inline constexpr std::string_view kShellBash = "bash";
inline constexpr std::string_view kShellSh = "sh";
inline constexpr std::string_view kShellBashLogin = "bash-login";  // bash -l -c: profile read
inline bool is_job_shell(std::string_view s) {
  return s.empty() || s == kShellBash || s == kShellSh || s == kShellBashLogin;
}

// The argv (after the agent's `--`) that runs `command` under `shell` (is_job_shell; anything
// else reads as the default). Always starts with /bin/sh, which every POSIX node has:
//   sh:         /bin/sh -c <command>
//   "" (auto):  /bin/sh -c 'bash if `command -v bash` finds it, else sh' orch-shell <command>
//   bash:       /bin/sh -c 'exec bash -c "$1", or exit 127 naming the missing bash' ...
//   bash-login: the same with bash -l -c
// Every form execs its shell, so the job's shell is the process the agent started.
std::vector<std::string> job_shell_argv(std::string_view shell, const std::string& command);

// The job's own `slurm:` section: each set value overrides the cluster's (merge_slurm_options),
// unless the cluster pins or forbids it (SlurmOptionRule in scheduler/spec/cluster_spec.h).
struct SlurmJobOptions {
  std::string partition;          // sbatch --partition
  std::string account;            // sbatch --account
  std::string qos;                // sbatch --qos
  std::string reservation;        // sbatch --reservation
  std::string constraint;         // sbatch --constraint (node features: "a100&ib", "[a|b]")
  std::optional<bool> exclusive;  // sbatch --exclusive (whole nodes); unset: the cluster's
  bool empty() const {
    return partition.empty() && account.empty() && qos.empty() && reservation.empty() &&
           constraint.empty() && !exclusive;
  }
  bool operator==(const SlurmJobOptions&) const = default;
};

// The option names of a `slurm:` section that SlurmJobOptions carries, in sbatch's order.
inline constexpr std::string_view kSlurmJobOptionNames[] = {
    "partition", "account", "qos", "reservation", "constraint", "exclusive"};
// The value of one of them as text ("" unset; exclusive: "true"/"false").
std::string slurm_option_value(const SlurmJobOptions& o, std::string_view name);

// Why `value` cannot be the value of sbatch option `name` (partition, account, ...), or "" when
// it can: empty, starting with '-' (it would read as another option), longer than 256 bytes,
// or holding a byte outside the option's safe set (a newline, a NUL, a blank, a quote...).
// Names: letters, digits and "._-" (account, qos, reservation, partition; partition may list
// several with ','); constraint also "&|[]*:,()!" (Slurm's feature expressions).
std::string slurm_option_problem(std::string_view name, std::string_view value);

// The job's values over the cluster's (each set one wins).
SlurmJobOptions merge_slurm_options(const SlurmJobOptions& cluster, const SlurmJobOptions& job);

nlohmann::json slurm_job_options_to_json(const SlurmJobOptions& o);
// ErrorKind::invalid when the JSON is not what slurm_job_options_to_json writes.
Result<SlurmJobOptions> slurm_job_options_from_json(const nlohmann::json& j);

// resources.memory: "64G", "512M", "1T" (binary units, as Slurm's --mem; "Gi" and "GiB" read the
// same) to MiB; nullopt when it is not such a size or is below 1 MiB or above 1 PiB.
std::optional<std::int64_t> parse_memory_mib(std::string_view text);
// MiB back to the shortest exact text ("64G", "1536M").
std::string memory_mib_text(std::int64_t mib);

}  // namespace orch
