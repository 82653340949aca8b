// See task_alert.h.
#include "scheduler/model/task_alert.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace orch {
namespace {

using nlohmann::json;

std::string text(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double number(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::optional<std::int64_t> integer(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace

std::optional<TaskAlert> task_alert_of(const json& record) {
  if (!record.is_object()) return std::nullopt;
  const json* s = &record;
  if (text(record, "event") != "io_stall") {
    auto member = record.find("stall");
    if (member == record.end() || !member->is_object()) return std::nullopt;
    s = &*member;
  }
  TaskAlert a;
  a.kind = "io_stall";
  a.path = text(*s, "path");
  if (a.path.empty()) return std::nullopt;
  a.step = integer(*s, "step").value_or(0);
  a.fs = text(*s, "fs");
  a.mount = text(*s, "mount");
  a.running_s = number(*s, "running_s");
  a.after_s = number(*s, "after_s");
  a.node = text(*s, "node");
  if (a.node.empty()) a.node = text(record, "node");
  auto rank = integer(*s, "task_rank");
  if (!rank) rank = integer(record, "task_rank");
  a.rank = rank && *rank >= 0 && *rank < (1 << 30) ? static_cast<int>(*rank) : -1;
  a.at_ms = integer(*s, "at_ms").value_or(integer(record, "at_ms").value_or(0));
  char times[80];
  std::snprintf(times, sizeof times, " has run %.0f s (bound %.0f s)", a.running_s, a.after_s);
  a.detail = "the save of step " + std::to_string(a.step) + " to " + a.path + times;
  if (!a.fs.empty() || !a.mount.empty()) a.detail += " on " + a.fs + " " + a.mount;
  return a;
}

std::optional<TaskAlert> task_alert_of_line(std::string_view line) {
  return task_alert_of(json::parse(line, nullptr, /*allow_exceptions=*/false));
}

}  // namespace orch
