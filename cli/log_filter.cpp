// See log_filter.h.
#include "cli/log_filter.h"

#include "scheduler/model/log_tag.h"
#include "scheduler/model/progress_prefix.h"

namespace orch {

bool LogFilter::keep(std::string_view line) const {
  if (options_.raw) return true;
  std::string_view text;
  const std::optional<LogTag> tag = split_log_tag(line, &text);
  if (options_.rank && (!tag || tag->rank != *options_.rank)) return false;
  if (!options_.node.empty() && (!tag || tag->node != options_.node)) return false;
  // A progress bar's carriage returns do not hide a protocol line: the line starts with it.
  return !text.starts_with(kProgressPrefix);
}

std::string LogFilter::feed(std::string_view chunk) {
  if (options_.raw) return std::string(chunk);
  std::string out;
  while (!chunk.empty()) {
    const std::size_t nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(chunk);
      break;
    }
    std::string_view line = chunk.substr(0, nl);
    if (!partial_.empty()) {
      partial_.append(line);
      line = partial_;
    }
    if (keep(line)) {
      out.append(line);
      out += '\n';
    }
    partial_.clear();
    chunk.remove_prefix(nl + 1);
  }
  return out;
}

std::string LogFilter::finish() {
  std::string out;
  if (!partial_.empty() && keep(partial_)) out = partial_ + "\n";
  partial_.clear();
  return out;
}

std::string check_log_filter(const LogFilterOptions& options, std::int64_t job_id, int tasks) {
  if (!options.rank && options.node.empty()) return "";
  const std::string job = "job " + std::to_string(job_id);
  const char* flag = options.rank ? "--rank" : "--node";
  if (tasks <= 1) {
    return std::string(flag) + ": " + job +
           " runs a single task, whose log lines carry no rank or node (only a gang's tasks "
           "tag theirs); drop " +
           flag;
  }
  if (options.rank && (*options.rank < 0 || *options.rank >= tasks)) {
    return "--rank " + std::to_string(*options.rank) + ": " + job + " has " +
           std::to_string(tasks) + " tasks, ranks 0 to " + std::to_string(tasks - 1);
  }
  if (!options.node.empty() && !log_tag_node_ok(options.node)) {
    return "--node " + options.node +
           ": not a node name (1 to 253 letters, digits, '.', '_' or '-')";
  }
  return "";
}

}  // namespace orch
