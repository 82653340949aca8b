#pragma once
// The one table of accelerator peak throughput (dense BF16, FLOP/s per accelerator).
// A cluster may override it with peak_tflops.

#include <optional>
#include <string_view>
#include <vector>

namespace orch {

struct AcceleratorInfo {
  std::string_view key;
  double peak_flops;  // FLOP/s
};

const std::vector<AcceleratorInfo>& accelerator_table();
std::optional<double> accelerator_peak_flops(std::string_view key);
// Peak FLOP/s per GPU of a cluster: its own peak_tflops when it states one, else its
// accelerator's from the table; none when neither is known (MFU cannot be computed there).
std::optional<double> peak_flops_per_gpu(std::string_view accelerator,
                                         std::optional<double> peak_tflops);

}  // namespace orch
