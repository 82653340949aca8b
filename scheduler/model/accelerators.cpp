#include "scheduler/model/accelerators.h"

namespace orch {

const std::vector<AcceleratorInfo>& accelerator_table() {
  // Dense BF16 peaks from the vendors' data sheets. "cpu-slot" is the nominal peak of one
  // local slot (a CPU core doing the toy trainer's matrix multiplies): 10 GFLOP/s.
  static const std::vector<AcceleratorInfo> table = {
      {"a100", 312e12},  {"h100-sxm", 989e12}, {"h100", 989e12},   {"h200", 989e12},
      {"b200", 2250e12}, {"mi300x", 1307e12},  {"cpu-slot", 10e9},
  };
  return table;
}

std::optional<double> accelerator_peak_flops(std::string_view key) {
  for (const auto& a : accelerator_table()) {
    if (a.key == key) return a.peak_flops;
  }
  return std::nullopt;
}

std::optional<double> peak_flops_per_gpu(std::string_view accelerator,
                                         std::optional<double> peak_tflops) {
  if (peak_tflops) return *peak_tflops * 1e12;
  return accelerator_peak_flops(accelerator);
}

}  // namespace orch
