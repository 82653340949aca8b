#pragma once
// What `orchestrate job logs` prints of a job's log (issue 41, item 5). A gang's agent tags each
// line of its task "[<node>/<rank>] " (scheduler/model/log_tag.h); the filter keeps whole lines
// only and, unless raw, hides protocol lines ("@orchestrate " after one tag) and keeps only the
// lines of one rank or one node when asked. The log comes in chunks that may end mid-line: a
// partial last line waits for its newline (the next chunk) or for finish() (the end of a read
// that does not follow, or of a followed attempt). Pure: no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace orch {

struct LogFilterOptions {
  bool raw = false;         // everything exactly as stored (then rank and node must be unset)
  std::optional<int> rank;  // only lines tagged with this task rank
  std::string node;         // only lines tagged with this node (empty: any)
};

class LogFilter {
 public:
  explicit LogFilter(LogFilterOptions options) : options_(std::move(options)) {}

  // The next chunk of the log: what to print now (raw: the chunk itself).
  std::string feed(std::string_view chunk);
  // The log ended (or this read did): the held partial line when it is kept, with a newline
  // (raw: as it was, without one).
  std::string finish();

  // Whether one line (without its newline) is printed.
  bool keep(std::string_view line) const;

 private:
  LogFilterOptions options_;
  std::string partial_;  // the start of a line whose newline has not come yet
};

// A --rank or --node that can match a line of a job with `tasks` tasks; "" when fine, else the
// error to print (a single task's log carries no tags).
std::string check_log_filter(const LogFilterOptions& options, std::int64_t job_id, int tasks);

}  // namespace orch
