#include "scheduler/lifecycle/mfu.h"

namespace orch {

std::optional<double> compute_mfu(double tokens, double seconds,
                                  std::optional<double> flops_per_token, int gpus,
                                  std::optional<double> peak_flops_per_gpu) {
  if (!flops_per_token || !peak_flops_per_gpu || tokens <= 0 || seconds <= 0 || gpus <= 0 ||
      *flops_per_token <= 0 || *peak_flops_per_gpu <= 0) {
    return std::nullopt;
  }
  double achieved = tokens / seconds * *flops_per_token;
  return achieved / (gpus * *peak_flops_per_gpu);
}

}  // namespace orch
