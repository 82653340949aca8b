// What dcgmi diag -r N -j printed (DCGM 3.x or 4.x, a banner, a torn report, an error message)
// through the agent's reader: parse_dcgm_diag_json must never crash or throw; every result it
// keeps is pass, fail, warn or skip; no result means an error that says why; the dcgm check
// names something and fails exactly when a test failed or nothing could be read.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "agents/dcgm_diag.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace orch::agent;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  DcgmDiag d = parse_dcgm_diag_json(text);
  bool failed = d.tests.empty();
  for (const DcgmTestResult& t : d.tests) {
    if (t.result != "pass" && t.result != "fail" && t.result != "warn" && t.result != "skip") {
      std::fprintf(stderr, "a result outside pass/fail/warn/skip: %s\n", t.result.c_str());
      std::abort();
    }
    if (t.gpu && *t.gpu < 0) std::abort();
    failed = failed || t.result == "fail";
  }
  if (d.tests.empty() == d.error.empty()) {
    std::fprintf(stderr, "results and an error disagree\n");
    std::abort();
  }
  Check c = dcgm_check(d, 2);
  if (c.name != "dcgm" || c.detail.empty() || c.ok == failed) {
    std::fprintf(stderr, "the dcgm check disagrees with the results\n");
    std::abort();
  }
  return 0;
}
