#include "scheduler/model/output_chunk.h"

namespace orch {

OutputLines split_output_chunk(std::string_view chunk, std::uint64_t offset, std::size_t max_bytes,
                               bool final) {
  OutputLines out;
  out.next_offset = offset;
  std::size_t end = chunk.rfind('\n');
  std::size_t usable = end == std::string_view::npos ? 0 : end + 1;
  // A full chunk without a newline is one very long line: hand it over in pieces. After the
  // writer is gone, an unterminated tail will never be completed, so it is a line too.
  if (usable == 0 && chunk.size() == max_bytes && max_bytes > 0) usable = chunk.size();
  if (final && chunk.size() < max_bytes) usable = chunk.size();
  std::size_t start = 0;
  while (start < usable) {
    std::size_t nl = chunk.find('\n', start);
    std::size_t stop = (nl == std::string_view::npos || nl >= usable) ? usable : nl;
    out.lines.emplace_back(chunk.substr(start, stop - start));
    start = stop + 1;
  }
  out.next_offset = offset + usable;
  return out;
}

}  // namespace orch
