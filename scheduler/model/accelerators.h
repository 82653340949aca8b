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

}  // namespace orch
