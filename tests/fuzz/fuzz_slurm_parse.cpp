// What a Slurm cluster prints, as far as orchestrate reads it: every parser of slurm_parse.h and
// probe_command.h on the same bytes (a captured sinfo, squeue, scontrol, sacct or sbatch output
// seeds them all). None may crash or throw: malformed output is an ErrorKind::invalid Result.
// Whatever parses is mapped to a RunPhase, as SlurmSite does with it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/slurm/probe_command.h"
#include "adapters/slurm/slurm_parse.h"

namespace {

void map_all(const orch::Result<std::vector<orch::slurm::JobRecord>>& jobs) {
  if (!jobs) return;
  for (const auto& job : *jobs) (void)orch::slurm::map_job_state(job);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace slurm = orch::slurm;
  const std::string_view out(reinterpret_cast<const char*>(data), size);

  (void)slurm::parse_node_list(out);
  map_all(slurm::parse_squeue(out));
  map_all(slurm::parse_scontrol_jobs(out));
  map_all(slurm::parse_sacct(out));
  (void)slurm::parse_sbatch_job_id(out);
  (void)slurm::is_accounting_disabled(out);
  (void)slurm::is_controller_unreachable(out);
  (void)slurm::expand_hostlist(out);
  (void)slurm::gpus_in_gres(out);
  (void)slurm::parse_agent_size(out);

  // StateLong|StateComplete as sinfo prints them, split at the first '|'.
  const auto bar = out.find('|');
  (void)slurm::node_is_healthy(out.substr(0, bar),
                               bar == std::string_view::npos ? "" : out.substr(bar + 1));

  const std::vector<std::string> nodes = {"alpha-n0", "alpha-n1", "gpu001"};
  (void)slurm::parse_probe_lines(out, nodes);
  return 0;
}
