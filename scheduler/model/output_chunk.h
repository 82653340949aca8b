#pragma once
// Turning a chunk of a job's output, read at some offset, into complete lines and the offset
// to read from next. Shared by every provider (a local file, a file read over SFTP, pod logs).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace orch {

struct OutputLines {
  std::vector<std::string> lines;
  std::uint64_t next_offset = 0;
};

// Complete ('\n'-terminated) lines of `chunk`, which was read at `offset` asking for at most
// `max_bytes`. With `final` set (the writer is gone) an unterminated tail counts as a last
// line. A single line longer than max_bytes is returned in pieces rather than stalling the
// reader.
OutputLines split_output_chunk(std::string_view chunk, std::uint64_t offset, std::size_t max_bytes,
                               bool final);

}  // namespace orch
