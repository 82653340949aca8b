// The clusters file parser on any text: it must never crash, hang or throw (Result errors).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scheduler/spec/clusters_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)orch::parse_clusters_file(text, "fuzz-clusters.yaml");
  return 0;
}
