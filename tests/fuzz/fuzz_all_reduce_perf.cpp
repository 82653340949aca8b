// What all_reduce_perf printed on a node (issue 43, the fabric step): parse_all_reduce_perf must
// never crash or throw, and what it accepts holds no negative size and a figure only when finite
// and read from a row or the average line.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "scheduler/model/all_reduce_perf.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto out = orch::parse_all_reduce_perf(text);
  if (!out) return 0;
  for (const auto& r : out->rows) {
    if (r.size_bytes < 0 || r.count < 0) {
      std::fprintf(stderr, "a row with a negative size or count was accepted\n");
      std::abort();
    }
  }
  auto figure = out->busbw_gb_s();
  if (figure && !std::isfinite(*figure)) {
    std::fprintf(stderr, "a bus bandwidth that is not finite was accepted\n");
    std::abort();
  }
  (void)out->problem();
  return 0;
}
