#pragma once
// Burn-in's fabric step on a Slurm cluster (issue 43): one round of node pairs as ONE command on
// the login node, and the reading of what it prints. Pure, like probe_command.h: every value
// through shell_quote()/shell_command().
//
// Each pair runs in the background, at once with the others, bounded by `timeout`:
//
//   timeout --kill-after=<k> <t> srun --job-name=<token>-p<i> --nodes=2 --ntasks-per-node=1
//       --nodelist=<a>,<b> --kill-on-bad-exit=1 [--gres=<gres>:<g>] [--partition/--account/--qos]
//       --time=<min> <all_reduce_perf> -b <bytes> -e <bytes> -g <g> -f 2 -w 2 -n 10
//       > $d/<i>.out 2> $d/<i>.err; echo $? > $d/<i>.rc
//
// ($d: a fresh `mktemp -d` on the login node), then `wait`, then every pair's exit status,
// output and the tail of its srun stderr between marker lines, then $d is removed. The tool must
// be able to span the two tasks (nccl-tests built with MPI=1 and srun's MPI plugin, or a wrapper
// script that does it); its output is rank 0's.

#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/model/fabric_step.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch::slurm {

// The command above. ErrorKind::invalid for a bad token (check_token, with "-p<i>" added), no
// pair, a pair of one node twice, a bad node name, a tool path that is not absolute, a message
// size that is not positive or a round time that is not positive.
Result<std::string> fabric_round_command(const FabricRoundRequest& request, const SlurmSpec& slurm);

// One result per pair of the request, in order: the figure from the pair's all_reduce_perf
// output (scheduler/model/all_reduce_perf.h), or why it has none (timed out, srun's error, the
// tool's failure line, wrong values). A pair the output does not mention failed ("no output").
std::vector<FabricPairResult> parse_fabric_round(std::string_view output,
                                                 const FabricRoundRequest& request);

}  // namespace orch::slurm
