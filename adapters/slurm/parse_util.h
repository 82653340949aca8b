#pragma once
// Small string helpers shared by the Slurm parsers (internal to adapters/slurm: not part of the
// API the adapter uses). Everything works on string_views of the command's output.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/common/text.h"

namespace orch::slurm::detail {

// The output's lines without their '\n' (and a trailing '\r'), skipping blank lines.
std::vector<std::string_view> non_blank_lines(std::string_view output);

std::string_view trim(std::string_view s);

// Splits at the first `fields - 1` occurrences of `sep`: the last field keeps the rest of the
// line, separators included (free text goes last). Fewer separators give fewer fields.
std::vector<std::string_view> split_first(std::string_view line, char sep, std::size_t fields);

// Splits at every `sep`.
std::vector<std::string_view> split_all(std::string_view s, char sep);

// A non-negative decimal integer that fits an int, nothing else (no sign, no spaces).
std::optional<int> parse_count(std::string_view s);

// The line as it may appear in an error message (scheduler/common/text.h).
using ::orch::quote_line;

// ErrorKind::invalid: "<what>: '<line>'".
Error malformed(std::string_view what, std::string_view line);

// The base word of a state as any of the tools may print it: "CANCELLED by 0", "CANCELLED+"
// (a truncated column), "FAILED,LAUNCH_FAILED" (the complete form).
std::string_view base_state(std::string_view s);

// The shortest text that reads back as the same number: 1 -> "1", 0.2 -> "0.2".
std::string shortest_number(double value);

// "3:0" -> {3, 0}; nullopt unless two counts separated by ':'.
struct CodeAndSignal {
  int code = 0;
  int signal = 0;
};
std::optional<CodeAndSignal> parse_exit_code(std::string_view s);

// A Slurm job id as squeue/sacct/scontrol print it: "123", array "123_4" / "123_[1-3]",
// heterogeneous "123+0". Must start with a digit and contain no spaces or separators.
bool is_job_id(std::string_view s);

// Upper-case job state word(s): [A-Z_]+.
bool is_state_word(std::string_view s);

// Whether a constant word list holds s.
template <std::size_t N>
bool contains(const std::string_view (&words)[N], std::string_view s) {
  for (std::string_view w : words) {
    if (w == s) return true;
  }
  return false;
}

}  // namespace orch::slurm::detail
