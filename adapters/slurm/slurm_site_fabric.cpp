// SlurmSite::fabric_round: one round of burn-in's fabric step, every pair's srun at once from
// the login node in one SSH command (fabric_command.h).
#include <chrono>

#include "adapters/slurm/fabric_command.h"
#include "adapters/slurm/slurm_parse.h"
#include "adapters/slurm/slurm_site.h"

namespace orch {

Result<std::vector<FabricPairResult>> SlurmSite::fabric_round(const FabricRoundRequest& request) {
  // Probes and fabric rounds share the nodes: one at a time.
  std::lock_guard<std::mutex> round(probe_mu_);
  auto command = slurm::fabric_round_command(request, spec_.slurm);
  if (!command) return command.error();
  // The remote `timeout`s end every srun before this deadline, so what the pairs printed still
  // comes back (probe_times).
  const auto deadline =
      std::chrono::milliseconds(static_cast<std::int64_t>(request.timeout_s * 1000.0));
  auto ran = ssh_->exec(*command, deadline);
  if (!ran) {
    for (std::size_t i = 0; i < request.pairs.size(); ++i) {
      (void)run({"scancel", "--name=" + request.token + "-p" + std::to_string(i + 1)}, true);
    }
    return ran.error();
  }
  auto results = slurm::parse_fabric_round(ran->out, request);
  // No pair measured and srun could not reach the controller: the site's fault, not the pairs'.
  bool none = true;
  for (const auto& r : results) none = none && !r.busbw_gb_s;
  if (none && slurm::is_controller_unreachable(ran->out)) {
    return make_error(ErrorKind::unreachable,
                      "site " + spec_.name + ": srun: the Slurm controller does not answer");
  }
  return results;
}

}  // namespace orch
