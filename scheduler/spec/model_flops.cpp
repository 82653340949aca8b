#include <optional>

#include "scheduler/spec/job_spec.h"

namespace orch {

std::optional<double> model_flops_per_token(const ModelSpec& model) {
  if (model.flops_per_token) return *model.flops_per_token;
  if (!model.parameters) return std::nullopt;
  // PaLM, appendix B: 6N for the dense matmuls (forward + backward), plus 12*L*H*S for
  // attention over a sequence of S tokens. Computed in double: L*H*S overflows int.
  double flops = 6.0 * *model.parameters;
  if (model.layers && model.hidden && model.sequence) {
    flops += 12.0 * static_cast<double>(*model.layers) * static_cast<double>(*model.hidden) *
             static_cast<double>(*model.sequence);
  }
  return flops;
}

}  // namespace orch
