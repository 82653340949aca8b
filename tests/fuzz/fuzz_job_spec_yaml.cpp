// The job spec parser on any text: it must never crash, hang or throw (parse_job_spec promises
// Result errors), and a spec it accepts must survive the store's JSON round trip unchanged
// (job_spec_json.h: job_spec_from_json(job_spec_to_json(s)) == s).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "scheduler/spec/job_spec_json.h"
#include "scheduler/spec/job_spec_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = orch::parse_job_spec(text, "fuzz.yaml");
  if (!spec) return 0;
  const nlohmann::json stored = orch::job_spec_to_json(*spec);
  auto again = orch::job_spec_from_json(stored);
  if (!again) {
    std::fprintf(stderr, "an accepted spec failed its JSON round trip: %s\n",
                 again.error().message.c_str());
    std::abort();
  }
  if (orch::job_spec_to_json(*again) != stored) {
    std::fprintf(stderr, "the JSON round trip changed the spec:\n%s\n%s\n", stored.dump().c_str(),
                 orch::job_spec_to_json(*again).dump().c_str());
    std::abort();
  }
  return 0;
}
