#pragma once
// Model FLOP utilisation: achieved model FLOP/s over the peak of the accelerators used.
//   MFU = (tokens / step_time) * flops_per_token / (gpus * peak FLOP/s per gpu)

#include <optional>

namespace orch {

// nullopt when any input is missing or not positive.
std::optional<double> compute_mfu(double tokens, double seconds,
                                  std::optional<double> flops_per_token, int gpus,
                                  std::optional<double> peak_flops_per_gpu);

}  // namespace orch
