#include "adapters/slurm/task_events.h"

#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "adapters/slurm/parse_util.h"

namespace orch::slurm {
namespace {

using nlohmann::json;

std::optional<double> parse_seconds(std::string_view s) {
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(value) || value < 0) {
    return std::nullopt;
  }
  return value;
}

std::optional<json> json_object(std::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

std::optional<int> int_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}

bool failed_exit(const TaskRecord& t) {
  return t.readable && t.event == "exit" && (t.signal || t.exit_code.value_or(0) != 0);
}

bool running_record(const TaskRecord& t) {
  return !t.empty && t.readable && t.event != "exit";
}

// The earliest record among the tasks `pick` accepts (then the lowest rank); nullptr if none.
template <typename Pick>
const TaskRecord* earliest(const std::vector<TaskRecord>& tasks, Pick pick) {
  const TaskRecord* first = nullptr;
  for (const TaskRecord& t : tasks) {
    if (!pick(t)) continue;
    if (first == nullptr || t.at_ms < first->at_ms ||
        (t.at_ms == first->at_ms && t.rank < first->rank)) {
      first = &t;
    }
  }
  return first;
}

}  // namespace

std::string seconds_text(double seconds) {
  return detail::shortest_number(seconds);
}

std::string gang_file_line(const LaunchRequest& r) {
  return "tasks=" + std::to_string(r.nodes * r.tasks_per_node) +
         " tasks_per_node=" + std::to_string(r.tasks_per_node) +
         " heartbeat_s=" + seconds_text(r.heartbeat_s) +
         " heartbeat_timeout_s=" + seconds_text(r.heartbeat_timeout_s);
}

std::optional<GangFile> parse_gang_file(std::string_view line) {
  std::map<std::string_view, std::string_view> fields;
  for (std::string_view word : detail::split_all(detail::trim(line), ' ')) {
    std::size_t eq = word.find('=');
    if (eq != std::string_view::npos) fields.emplace(word.substr(0, eq), word.substr(eq + 1));
  }
  auto count = [&](std::string_view key) -> std::optional<int> {
    auto it = fields.find(key);
    if (it == fields.end()) return std::nullopt;
    auto n = detail::parse_count(it->second);
    return n && *n >= 1 ? n : std::nullopt;
  };
  auto seconds = [&](std::string_view key) -> std::optional<double> {
    auto it = fields.find(key);
    return it == fields.end() ? std::nullopt : parse_seconds(it->second);
  };
  auto tasks = count("tasks");
  auto per_node = count("tasks_per_node");
  auto heartbeat = seconds("heartbeat_s");
  auto timeout = seconds("heartbeat_timeout_s");
  if (!tasks || !per_node || !heartbeat || !timeout) return std::nullopt;
  return GangFile{*tasks, *per_node, *heartbeat, *timeout};
}

TaskRecord parse_task_record(int rank, std::string_view line) {
  TaskRecord t;
  t.rank = rank;
  auto j = json_object(detail::trim(line));
  if (!j) return t;
  auto event = j->find("event");
  auto at = j->find("at_ms");
  if (event == j->end() || !event->is_string() || at == j->end() || !at->is_number_integer()) {
    return t;
  }
  t.readable = true;
  t.event = event->get<std::string>();
  t.at_ms = at->get<std::int64_t>();
  if (auto node = j->find("node"); node != j->end() && node->is_string()) {
    t.node = node->get<std::string>();
  }
  t.exit_code = int_field(*j, "exit_code");
  t.signal = int_field(*j, "signal");
  t.fault = task_fault_of(*j);
  t.stall = task_alert_of(*j);
  return t;
}

std::string marker_line(const NodeLostMarker& m) {
  json j{{"node", m.node}, {"task", m.task}, {"detail", m.detail}};
  if (m.fault) j["fault"] = json::parse(task_fault_json(*m.fault));
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<NodeLostMarker> parse_marker(std::string_view line) {
  auto j = json_object(detail::trim(line));
  if (!j) return std::nullopt;
  auto node = j->find("node");
  if (node == j->end() || !node->is_string()) return std::nullopt;
  NodeLostMarker m;
  m.node = node->get<std::string>();
  m.task = int_field(*j, "task").value_or(-1);
  if (auto d = j->find("detail"); d != j->end() && d->is_string()) m.detail = d->get<std::string>();
  m.fault = task_fault_of(*j);
  return m;
}

ExitStatus node_lost_status(const NodeLostMarker& m) {
  ExitStatus s;
  s.node_lost = true;
  s.cause = ExitCause::node_lost;
  s.failed_node = m.node;
  s.detail = m.detail.empty() ? "node " + m.node + " lost" : m.detail;
  return s;
}

ExitStatus marker_status(const NodeLostMarker& m) {
  return m.fault ? fault_exit_status(*m.fault, m.node, m.task) : node_lost_status(m);
}

std::vector<TaskAlert> task_alerts(const TaskSnapshot& snapshot,
                                   const std::vector<std::string>& job_nodes) {
  std::vector<TaskAlert> out;
  for (const TaskRecord& t : snapshot.tasks) {
    if (!t.stall) continue;
    TaskAlert a = *t.stall;
    if (a.node.empty()) a.node = task_node(t, snapshot, job_nodes);
    if (a.rank < 0) a.rank = t.rank;
    out.push_back(std::move(a));
  }
  return out;
}

std::string task_node(const TaskRecord& task, const TaskSnapshot& snapshot,
                      const std::vector<std::string>& job_nodes) {
  if (!task.node.empty()) return task.node;
  if (!snapshot.gang || task.rank < 0) return "";
  auto node_rank = static_cast<std::size_t>(task.rank / snapshot.gang->tasks_per_node);
  return node_rank < job_nodes.size() ? job_nodes[node_rank] : "";
}

std::optional<NodeLostMarker> silent_task(const TaskSnapshot& snapshot, std::int64_t now_ms,
                                          const std::vector<std::string>& job_nodes) {
  const auto& gang = snapshot.gang;
  if (!gang || gang->heartbeat_s <= 0 || gang->heartbeat_timeout_s <= 0) return std::nullopt;
  const auto timeout_ms = static_cast<std::int64_t>(std::llround(gang->heartbeat_timeout_s * 1000));
  std::set<std::string> live_nodes, silent_nodes;
  for (const TaskRecord& t : snapshot.tasks) {
    if (!running_record(t)) continue;
    const std::string node = task_node(t, snapshot, job_nodes);
    live_nodes.insert(node);
    if (now_ms - t.at_ms >= timeout_ms) silent_nodes.insert(node);
  }
  const TaskRecord* lost = earliest(snapshot.tasks, [&](const TaskRecord& t) {
    return running_record(t) && now_ms - t.at_ms >= timeout_ms;
  });
  // Every node of a multi-node gang silent at once: the login node's view, not a node.
  if (lost == nullptr || (live_nodes.size() >= 2 && silent_nodes.size() == live_nodes.size())) {
    return std::nullopt;
  }
  NodeLostMarker m;
  m.node = task_node(*lost, snapshot, job_nodes);
  m.task = lost->rank;
  m.detail = "no heartbeat from task " + std::to_string(lost->rank) +
             (m.node.empty() ? "" : " on " + m.node) + " for " +
             std::to_string((now_ms - lost->at_ms) / 1000) + " s";
  return m;
}

std::optional<NodeLostMarker> faulted_task(const TaskSnapshot& snapshot,
                                           const std::vector<std::string>& job_nodes) {
  const TaskRecord* first = nullptr;
  for (const TaskRecord& t : snapshot.tasks) {
    if (!t.readable || !t.fault) continue;
    if (first == nullptr || t.fault->at_ms < first->fault->at_ms ||
        (t.fault->at_ms == first->fault->at_ms && t.rank < first->rank)) {
      first = &t;
    }
  }
  if (first == nullptr) return std::nullopt;
  NodeLostMarker m;
  m.node = first->fault->node.empty() ? task_node(*first, snapshot, job_nodes) : first->fault->node;
  m.task = first->fault->task_rank.value_or(first->rank);
  m.fault = first->fault;
  m.fault->node = m.node;
  m.detail = fault_exit_status(*m.fault, m.node, m.task).detail;
  return m;
}

std::string failed_node_after_end(const TaskSnapshot& snapshot, std::string_view state,
                                  const std::vector<std::string>& job_nodes) {
  const TaskRecord* first = nullptr;
  if (state == "FAILED" || state == "OUT_OF_MEMORY") {
    first = earliest(snapshot.tasks, failed_exit);
  } else if (state == "NODE_FAIL" || state == "BOOT_FAIL") {
    first = earliest(snapshot.tasks, running_record);
  }
  return first ? task_node(*first, snapshot, job_nodes) : "";
}

}  // namespace orch::slurm
