// A job's stdout line through the progress protocol: parse_progress_line must never crash or
// throw, and a report it accepts must read back the same after format_progress_line (the toy
// trainer and the agent print lines with it).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scheduler/model/progress_line.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  auto parsed = orch::parse_progress_line(line);
  if (!parsed || !parsed->ok()) return 0;
  const std::string printed = orch::format_progress_line(parsed->value());
  auto again = orch::parse_progress_line(printed);
  if (!again || !again->ok() || orch::format_progress_line(again->value()) != printed) {
    std::fprintf(stderr, "an accepted progress line does not read back: %s\n", printed.c_str());
    std::abort();
  }
  return 0;
}
