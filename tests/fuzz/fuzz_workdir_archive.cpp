// A workdir upload (issue 40) as the server checks it: check_workdir_archive on any bytes (and
// padded to whole blocks, so the member rules are reached), ustar::parse_header on the first
// block. An accepted archive's every header must parse, with a name check_member_name takes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "adapters/code/code_store.h"
#include "scheduler/common/ustar.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  (void)orch::check_workdir_archive(bytes);
  std::string padded = bytes + std::string(orch::ustar::padding(bytes.size()), '\0');
  if (padded.size() >= orch::ustar::kBlock) {
    (void)orch::ustar::parse_header(std::string_view(padded).substr(0, orch::ustar::kBlock));
  }
  if (!orch::check_workdir_archive(padded).ok()) return 0;
  for (std::size_t at = 0; at + orch::ustar::kBlock <= padded.size();) {
    const std::string_view block = std::string_view(padded).substr(at, orch::ustar::kBlock);
    if (orch::ustar::is_zero_block(block)) break;
    auto m = orch::ustar::parse_header(block);
    if (!m) {
      std::fprintf(stderr, "an accepted archive has a header that does not parse\n");
      std::abort();
    }
    if (m->name.rfind("./", 0) == 0) m->name.erase(0, 2);
    if (m->name != "." && !orch::ustar::check_member_name(m->name).ok()) {
      std::fprintf(stderr, "an accepted archive has a bad name: %s\n", m->name.c_str());
      std::abort();
    }
    at += orch::ustar::kBlock + m->size + orch::ustar::padding(m->size);
  }
  return 0;
}
