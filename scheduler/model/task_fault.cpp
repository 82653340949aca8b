#include "scheduler/model/task_fault.h"

#include <nlohmann/json.hpp>

namespace orch {
namespace {

using nlohmann::json;

template <typename T>
std::optional<T> integer(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<T>();
}

std::string text(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::optional<TaskFault> task_fault_of(const json& record) {
  if (!record.is_object()) return std::nullopt;
  const json* f = &record;
  // A fault record, or a fault as task_fault_json writes it (no event); else a record's member.
  const bool itself = text(record, "event") == "fault" ||
                      (!record.contains("event") && record.contains("cause"));
  if (!itself) {
    auto member = record.find("fault");
    if (member == record.end() || !member->is_object()) return std::nullopt;
    f = &*member;
  }
  const std::string cause = text(*f, "cause");
  TaskFault out;
  if (cause == "gpu_xid") {
    out.cause = ExitCause::gpu_xid;
  } else if (cause == "gpu_ecc") {
    out.cause = ExitCause::gpu_ecc;
  } else {
    return std::nullopt;
  }
  out.node = text(*f, "node");
  out.task_rank = integer<int>(*f, "task_rank");
  out.gpu = integer<int>(*f, "gpu");
  out.pci = text(*f, "pci");
  out.xid = integer<int>(*f, "xid");
  out.ecc_uncorrected = integer<std::int64_t>(*f, "ecc_uncorrected");
  out.detail = text(*f, "detail");
  out.at_ms = integer<std::int64_t>(*f, "at_ms").value_or(0);
  if (out.detail.empty()) {
    out.detail = std::string(to_string(out.cause)) + (out.gpu ? " on GPU " + std::to_string(*out.gpu) : "");
  }
  return out;
}

std::optional<TaskFault> task_fault_of_line(std::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  return task_fault_of(j);
}

ExitStatus fault_exit_status(const TaskFault& fault, const std::string& node, int rank) {
  ExitStatus s;
  s.cause = fault.cause;
  s.failed_node = fault.node.empty() ? node : fault.node;
  if (fault.task_rank) {
    s.failed_rank = *fault.task_rank;
  } else if (rank >= 0) {
    s.failed_rank = rank;
  }
  s.detail = (s.failed_node.empty() ? "" : s.failed_node + ": ") + fault.detail;
  if (fault.at_ms > 0) s.last_heard_ms = fault.at_ms;
  return s;
}

std::string task_fault_json(const TaskFault& f) {
  json j = {{"cause", std::string(to_string(f.cause))}, {"detail", f.detail}, {"at_ms", f.at_ms}};
  if (!f.node.empty()) j["node"] = f.node;
  if (f.task_rank) j["task_rank"] = *f.task_rank;
  if (f.gpu) j["gpu"] = *f.gpu;
  if (!f.pci.empty()) j["pci"] = f.pci;
  if (f.xid) j["xid"] = *f.xid;
  if (f.ecc_uncorrected) j["ecc_uncorrected"] = *f.ecc_uncorrected;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace orch
