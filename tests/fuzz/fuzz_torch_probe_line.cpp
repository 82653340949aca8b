// What the bundled PyTorch probe printed (any interpreter's stdout: warnings, a traceback, a
// torn line) through the agent's hand-written reader: parse_torch_output must never crash or
// throw; for a reading it accepts, the torch-probe check names something and the compute figure
// (the median GPU) lies within the GPUs' own range.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "agents/torch_result.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view out(reinterpret_cast<const char*>(data), size);
  std::string why;
  auto reading = orch::agent::parse_torch_output(out, &why);
  if (!reading) {
    if (why.empty()) {
      std::fprintf(stderr, "a refused torch line gives no reason\n");
      std::abort();
    }
    return 0;
  }
  const orch::agent::Check check = orch::agent::torch_check(*reading);
  if (check.name != "torch-probe" || check.detail.empty()) {
    std::fprintf(stderr, "the torch-probe check says nothing\n");
    std::abort();
  }
  if (auto median = orch::agent::torch_median_gpu_tflops(*reading)) {
    double lo = 1e308, hi = -1e308;
    for (const auto& g : reading->gpus) {
      if (g.tflops && *g.tflops > 0) lo = std::min(lo, *g.tflops), hi = std::max(hi, *g.tflops);
    }
    if (*median < lo || *median > hi) {
      std::fprintf(stderr, "the median GPU %g lies outside [%g, %g]\n", *median, lo, hi);
      std::abort();
    }
  }
  return 0;
}
