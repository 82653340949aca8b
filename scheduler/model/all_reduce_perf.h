#pragma once
// Reading what nccl-tests' `all_reduce_perf` prints (issue 43, the fabric step): the results
// table (one row per message size: out-of-place and in-place time, algbw, busbw and #wrong), the
// `# Out of bounds values` and `# Avg bus bandwidth` lines, and the failure lines the tool prints
// when NCCL or CUDA fails. Pure. Both table layouts are read: nccl-tests 2.x (a `root` column and
// `#wrong` counts) and 1.x (no `root`, an `error` column of the largest error): the columns are
// found by the header's names. Real outputs: tests/fixtures/all_reduce_perf/README.md.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"

namespace orch {

struct AllReducePerfRow {
  std::int64_t size_bytes = 0;
  std::int64_t count = 0;
  std::string type;   // "float"
  std::string redop;  // "sum"
  std::optional<double> out_time_us, out_algbw_gb_s, out_busbw_gb_s;
  std::optional<double> in_time_us, in_algbw_gb_s, in_busbw_gb_s;
  std::optional<std::int64_t> out_wrong, in_wrong;  // values wrong (2.x only; "N/A": nullopt)
};

struct AllReducePerfOutput {
  std::vector<AllReducePerfRow> rows;
  std::optional<double> avg_busbw_gb_s;       // "# Avg bus bandwidth    : 40.3"
  std::optional<std::int64_t> out_of_bounds;  // "# Out of bounds values : 0 OK"
  std::int64_t wrong = 0;                     // sum of every row's #wrong
  std::string failure;  // the first "Test NCCL failure ..." / "... failure ..." line, trimmed

  // The pair's figure: the largest message's bus bandwidth (out-of-place, else in-place), else
  // the average line's; nullopt when there is neither.
  std::optional<double> busbw_gb_s() const;
  // Why the run does not count, "" when it does: the failure line, wrong values, no figure.
  std::string problem() const;
};

// invalid when the text holds neither a result row nor the average line (it names the first
// line, quoted).
Result<AllReducePerfOutput> parse_all_reduce_perf(std::string_view text);

}  // namespace orch
