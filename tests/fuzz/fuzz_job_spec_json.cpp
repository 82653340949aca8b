// The JSON job body (what the store keeps and the REST API returns) on any bytes: parsed by
// nlohmann without exceptions, as the server's routes do, then job_spec_from_json, which must
// answer a Result (invalid UTF-8 and odd types included), never throw or crash.
#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "scheduler/spec/job_spec_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto json = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  auto spec = orch::job_spec_from_json(json);
  if (spec) (void)orch::job_spec_to_json(*spec);
  return 0;
}
