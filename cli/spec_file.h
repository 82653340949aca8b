#pragma once
// Reading a job spec file for `orchestrate job submit`: never more than the server would take.

#include <cstddef>
#include <string>

namespace orch {

// Reads `path` into `text`, at most `limit` bytes. A directory, a file larger than `limit` (told
// from its size without reading it), and a special file (a pipe, /dev/zero, /dev/stdin) that
// yields more than `limit` bytes (read only up to limit + 1) are refused: false, with `error`
// saying why in a sentence that names the path.
bool read_spec_file(const std::string& path, std::size_t limit, std::string& text,
                    std::string& error);

}  // namespace orch
