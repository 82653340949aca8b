// rsync's --info=progress2 output as RsyncTransferPort reads it: RsyncProgressParser fed the
// bytes in chunks (the first byte picks the chunk size, as reads from a pipe cut anywhere),
// each record on its own, and the stderr helpers of rsync_failure.h. Nothing may crash or
// throw, and a record read must hold a percent in 0..100 and a rate >= 0.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "adapters/transfer/rsync_failure.h"
#include "adapters/transfer/rsync_progress.h"

namespace {

void check(const std::optional<orch::transfer::RsyncProgressLine>& line) {
  if (!line) return;
  if (line->percent < 0 || line->percent > 100 || !(line->rate_bytes_per_s >= 0)) {
    std::fprintf(stderr, "rsync progress out of range: %d%% %g B/s\n", line->percent,
                 line->rate_bytes_per_s);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  const std::string_view out(reinterpret_cast<const char*>(data) + 1, size - 1);

  orch::transfer::RsyncProgressParser parser;
  for (std::size_t at = 0; at < out.size(); at += chunk) {
    (void)parser.feed(out.substr(at, std::min(chunk, out.size() - at)));
    check(parser.latest());
  }
  check(orch::transfer::parse_progress_line(out));
  (void)orch::transfer::parse_rsync_rate(out);
  (void)orch::transfer::last_lines(out, 3);
  (void)orch::transfer::says_unreachable(out);
  return 0;
}
