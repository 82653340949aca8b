#pragma once
// The node probe on a Slurm cluster (burn-in, or the check that releases a quarantined node):
// the commands SlurmSite::probe_nodes runs and the reading of what they print. Pure, like
// batch_script.h: no I/O, every value through shell_quote().
//
// One round is one Slurm job with one task per node, run by srun from the login node:
//
//   timeout --kill-after=<k> <t> srun --job-name=<token> --nodes=<n> --ntasks-per-node=1
//       --nodelist=<a,b,...> --kill-on-bad-exit=0 --chdir=<dir>
//       --output=<dir>/.orch-probe-<token>-%t.out [--gres=<gres>:<g>]
//       [--partition=...] [--account=...] [--qos=...] --time=<minutes>
//       <agent> probe --dir <dir> --io-bytes <N> --compute-s <S> [GPU options]
//
// where the GPU options are gpu_probe_args() of the request's (scheduler/model/
// gpu_probe_options.h): --nvidia-smi, --expect-gpus, --dcgm/--dcgm-level, --torch-python/-s.
//
// The agent is the server's own orchestrate-agent, uploaded once per build to
// <storage_root>/bin/orchestrate-agent-<id> (id: the first 16 hex digits of its SHA-256), so a
// cluster never runs a probe older or newer than the server that reads it. The node name in
// each line is the agent's $SLURMD_NODENAME. `timeout` on the login node bounds the round even
// when the SSH connection is gone: srun, sent TERM, cancels the job (or its pending request).
// --kill-on-bad-exit=0: one node's failing probe must not kill the others'.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/model/probe_result.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch::slurm {

// <storage_root>/bin/orchestrate-agent-<agent_id>
std::string remote_agent_path(const std::string& storage_root, const std::string& agent_id);

// The default probe directory: the cluster's checkpoint root (the filesystem whose speed
// matters most) when it has one, else <storage_root>/probe.
std::string default_probe_dir(const ClusterSpec& cluster);

// How a round's time (the SSH call's deadline) is shared out: the remote `timeout` ends srun
// `margin` seconds before the SSH deadline (half of it for TERM, half for the KILL after it),
// so the round's partial output still comes back. margin = 10% of the round, 2..15 s.
struct ProbeTimes {
  double remote_s = 0;      // timeout's duration
  double kill_after_s = 0;  // timeout --kill-after
  int time_limit_min = 1;   // srun --time, whole minutes, at least 1
};
ProbeTimes probe_times(double round_s);

struct ProbeJob {
  std::string token;               // the job name (ErrorKind::invalid unless check_token likes it)
  std::vector<std::string> nodes;  // one task on each; names as check_node_names wants them
  std::string agent;               // the agent's path on the cluster
  std::string dir;                 // probed directory, also the task's working directory
  std::int64_t io_bytes = 0;
  double compute_s = 0;
  double round_s = 60;    // the whole round (see probe_times)
  int gpus_per_node = 0;  // --gres=<slurm.gres>:<n> when > 0, so the probe can see the GPUs
  GpuProbeOptions gpu;    // the probe's GPU parts (issue 43)
};

// The argv above. ErrorKind::invalid for a bad token, no nodes, a bad node name, an agent or
// dir that is not an absolute path, negative io_bytes/compute_s or a round that is not positive.
Result<std::vector<std::string>> probe_srun_argv(const ProbeJob& job, const SlurmSpec& slurm);

// The round as one shell line for the login node: the srun above with each task's stdout in a
// file of its own (`--output=<dir>/.orch-probe-<token>-%t.out`), then those files printed in
// turn and removed, and srun's exit status kept. srun relays its tasks' stdout in chunks, and
// with several tasks a line longer than about 4 KiB (a probe line of 8 GPUs' readings is 5 to
// 7 KiB) comes out cut and interleaved with another task's; files keep every line whole.
Result<std::string> probe_round_command(const ProbeJob& job, const SlurmSpec& slurm);

// One shell command run before the round: creates the agent's directory and the probe directory
// (mkdir -p) and prints the agent's size in bytes when it is there and executable, nothing when
// it is not; parse_agent_size reads that. The upload is skipped when the size matches (the
// name already holds the content's hash).
Result<std::string> probe_prepare_command(const std::string& agent, const std::string& dir);
std::optional<std::int64_t> parse_agent_size(std::string_view output);

// srun's stdout: every line that starts with '{' is one task's probe result. Lines that do not
// parse, name a node outside `nodes`, or repeat a node already seen are left out (and listed in
// `rejected`, for the error message when nothing was usable): a node whose output is garbled
// has failed its probe; the others still count.
struct ProbeLines {
  std::vector<ProbeResult> results;
  std::vector<std::string> rejected;  // why each left-out line was left out
};
ProbeLines parse_probe_lines(std::string_view output, const std::vector<std::string>& nodes);

}  // namespace orch::slurm
