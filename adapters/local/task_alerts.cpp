// See task_alerts.h.
#include "adapters/local/task_alerts.h"

#include <sys/stat.h>

#include "scheduler/model/task_alert.h"

namespace orch::local {

std::string read_last_record(const std::string& events_path) {
  constexpr std::uint64_t kTail = 64 << 10;
  struct stat st {};
  if (stat(events_path.c_str(), &st) != 0) return "";
  const auto size = static_cast<std::uint64_t>(st.st_size);
  auto tail = read_range(events_path, size > kTail ? size - kTail : 0, kTail);
  if (!tail) return "";
  std::string_view text = *tail;
  const auto end = text.rfind('\n');
  if (end == std::string_view::npos) return "";
  text = text.substr(0, end);
  const auto start = text.rfind('\n');
  return std::string(start == std::string_view::npos ? text : text.substr(start + 1));
}

std::vector<TaskAlert> read_task_alerts(const RunPaths& paths, int tasks) {
  std::vector<TaskAlert> out;
  for (int rank = 0; rank < tasks; ++rank) {
    auto alert = task_alert_of_line(read_last_record(task_paths(paths, rank).events));
    if (!alert) continue;
    if (alert->rank < 0 && tasks > 1) alert->rank = rank;
    out.push_back(std::move(*alert));
  }
  return out;
}

}  // namespace orch::local
