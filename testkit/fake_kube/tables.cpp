#include "testkit/fake_kube/tables.h"

#include <chrono>

#include "testkit/fake_kube/kube_json.h"
#include "testkit/fake_kube/pod_status.h"

namespace orch::fake_kube {
namespace {

using nlohmann::json;
using Clock = std::chrono::system_clock;

json column(const std::string& name, const std::string& type, int priority = 0,
            const std::string& format = "") {
  return {{"name", name},
          {"type", type},
          {"format", format},
          {"description", name},
          {"priority", priority}};
}

std::string age(const json& o) {
  const auto created = parse_rfc3339(string_at(o, {"metadata", "creationTimestamp"}));
  if (created == Clock::time_point{}) return "<unknown>";
  return human_duration(
      std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - created).count());
}

std::string or_none(const std::string& s) {
  return s.empty() ? "<none>" : s;
}

std::vector<json> node_row(const json& n, std::vector<json>& cols) {
  cols = {column("Name", "string", 0, "name"),
          column("Status", "string"),
          column("Roles", "string"),
          column("Age", "string"),
          column("Version", "string"),
          column("Internal-IP", "string", 1),
          column("External-IP", "string", 1),
          column("OS-Image", "string", 1),
          column("Kernel-Version", "string", 1),
          column("Container-Runtime", "string", 1)};
  std::string status = condition_status(n, "Ready") == "True" ? "Ready" : "NotReady";
  if (at_path(n, {"spec", "unschedulable"}) == true) status += ",SchedulingDisabled";
  const json& info = at_path(n, {"status", "nodeInfo"});
  return {string_at(n, {"metadata", "name"}),
          status,
          "<none>",
          age(n),
          string_at(info, {"kubeletVersion"}),
          "127.0.0.1",
          "<none>",
          string_at(info, {"osImage"}),
          string_at(info, {"kernelVersion"}),
          string_at(info, {"containerRuntimeVersion"})};
}

std::string pod_status_text(const json& p) {
  std::string reason = string_at(p, {"status", "reason"}, string_at(p, {"status", "phase"}));
  const json& cs = at_path(p, {"status", "containerStatuses"});
  if (cs.is_array() && !cs.empty()) {
    const json& state = at_path(cs[0], {"state"});
    if (state.contains("waiting")) {
      reason = string_at(state, {"waiting", "reason"}, reason);
    } else if (state.contains("terminated") && string_at(p, {"status", "reason"}).empty()) {
      reason = string_at(state, {"terminated", "reason"}, reason);
    }
  }
  if (!at_path(p, {"metadata", "deletionTimestamp"}).is_null()) {
    reason = string_at(p, {"status", "reason"}) == "NodeLost" ? "Unknown" : "Terminating";
  }
  return reason;
}

std::vector<json> pod_row(const json& p, std::vector<json>& cols) {
  cols = {column("Name", "string", 0, "name"),
          column("Ready", "string"),
          column("Status", "string"),
          column("Restarts", "string"),
          column("Age", "string"),
          column("IP", "string", 1),
          column("Node", "string", 1),
          column("Nominated Node", "string", 1),
          column("Readiness Gates", "string", 1)};
  const json& cs = at_path(p, {"status", "containerStatuses"});
  const json& containers = at_path(p, {"spec", "containers"});
  int ready = 0;
  if (cs.is_array()) {
    for (const json& c : cs) ready += at_path(c, {"ready"}) == true ? 1 : 0;
  }
  const int total = containers.is_array() ? static_cast<int>(containers.size()) : 0;
  return {string_at(p, {"metadata", "name"}),
          std::to_string(ready) + "/" + std::to_string(total),
          pod_status_text(p),
          "0",
          age(p),
          or_none(string_at(p, {"status", "podIP"})),
          or_none(string_at(p, {"spec", "nodeName"})),
          "<none>",
          "<none>"};
}

std::vector<json> job_row(const json& j, std::vector<json>& cols) {
  cols = {column("Name", "string", 0, "name"),
          column("Status", "string"),
          column("Completions", "string"),
          column("Duration", "string"),
          column("Age", "string"),
          column("Containers", "string", 1),
          column("Images", "string", 1),
          column("Selector", "string", 1)};
  std::string status = "Running";
  if (condition_status(j, "Complete") == "True") status = "Complete";
  if (condition_status(j, "Failed") == "True") status = "Failed";
  if (at_path(j, {"spec", "suspend"}) == true) status = "Suspended";
  const std::string completions = std::to_string(int_at(j, {"status", "succeeded"}, 0)) + "/" +
                                  std::to_string(int_at(j, {"spec", "completions"}, 1));
  std::string duration;
  const auto start = parse_rfc3339(string_at(j, {"status", "startTime"}));
  if (start != Clock::time_point{}) {
    auto end = parse_rfc3339(string_at(j, {"status", "completionTime"}));
    if (end == Clock::time_point{}) end = Clock::now();
    duration =
        human_duration(std::chrono::duration_cast<std::chrono::seconds>(end - start).count());
  }
  std::string names;
  std::string images;
  const json& containers = at_path(j, {"spec", "template", "spec", "containers"});
  if (containers.is_array()) {
    for (const json& c : containers) {
      names += (names.empty() ? "" : ",") + string_at(c, {"name"});
      images += (images.empty() ? "" : ",") + string_at(c, {"image"});
    }
  }
  return {string_at(j, {"metadata", "name"}),
          status,
          completions,
          duration,
          age(j),
          names,
          images,
          "batch.kubernetes.io/controller-uid=" + string_at(j, {"metadata", "uid"})};
}

std::vector<json> service_row(const json& s, std::vector<json>& cols) {
  cols = {column("Name", "string", 0, "name"), column("Type", "string"),
          column("Cluster-IP", "string"),      column("External-IP", "string"),
          column("Port(s)", "string"),         column("Age", "string"),
          column("Selector", "string", 1)};
  std::string ports;
  const json& list = at_path(s, {"spec", "ports"});
  if (list.is_array()) {
    for (const json& p : list) {
      ports += (ports.empty() ? "" : ",") + std::to_string(int_at(p, {"port"}, 0)) + "/" +
               string_at(p, {"protocol"}, "TCP");
    }
  }
  std::string selector;
  const json& sel = at_path(s, {"spec", "selector"});
  if (sel.is_object()) {
    for (const auto& [k, v] : sel.items()) {
      selector +=
          (selector.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : "");
    }
  }
  return {string_at(s, {"metadata", "name"}),
          string_at(s, {"spec", "type"}, "ClusterIP"),
          string_at(s, {"spec", "clusterIP"}),
          "<none>",
          or_none(ports),
          age(s),
          or_none(selector)};
}

// Never the values: the real server prints how many keys there are.
std::vector<json> secret_row(const json& s, std::vector<json>& cols) {
  cols = {column("Name", "string", 0, "name"), column("Type", "string"), column("Data", "integer"),
          column("Age", "string")};
  const json& data = at_path(s, {"data"});
  const long long keys = data.is_object() ? static_cast<long long>(data.size()) : 0;
  return {string_at(s, {"metadata", "name"}), string_at(s, {"type"}, "Opaque"), keys, age(s)};
}

std::vector<json> namespace_row(const json& n, std::vector<json>& cols) {
  cols = {column("Name", "string", 0, "name"), column("Status", "string"), column("Age", "string")};
  return {string_at(n, {"metadata", "name"}), string_at(n, {"status", "phase"}), age(n)};
}

}  // namespace

bool wants_table(const std::string& accept) {
  return accept.find("as=Table") != std::string::npos;
}

std::string human_duration(long long seconds) {
  const auto f = [](long long a, const char* ua, long long b, const char* ub) {
    return b == 0 ? std::to_string(a) + ua : std::to_string(a) + ua + std::to_string(b) + ub;
  };
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return std::to_string(seconds) + "s";
  const long long minutes = seconds / 60;
  if (minutes < 10) return f(minutes, "m", seconds % 60, "s");
  if (minutes < 180) return std::to_string(minutes) + "m";
  const long long hours = minutes / 60;
  if (hours < 8) return f(hours, "h", minutes % 60, "m");
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) return f(hours / 24, "d", hours % 24, "h");
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) return f(hours / 24 / 365, "y", (hours / 24) % 365, "d");
  return std::to_string(hours / 24 / 365) + "y";
}

json to_table(const std::string& resource, const std::vector<json>& objects,
              const std::string& resource_version, const std::string& include_object) {
  std::vector<json> cols;
  json rows = json::array();
  const auto row_of = [&](const json& o) -> std::vector<json> {
    if (resource == "nodes") return node_row(o, cols);
    if (resource == "pods") return pod_row(o, cols);
    if (resource == "jobs") return job_row(o, cols);
    if (resource == "services") return service_row(o, cols);
    if (resource == "secrets") return secret_row(o, cols);
    return namespace_row(o, cols);
  };
  for (const json& o : objects) {
    json row = {{"cells", row_of(o)}};
    if (include_object == "Object") {
      row["object"] = o;
    } else if (include_object != "None") {
      row["object"] = {{"kind", "PartialObjectMetadata"},
                       {"apiVersion", "meta.k8s.io/v1"},
                       {"metadata", o.contains("metadata") ? o["metadata"] : json::object()}};
    }
    rows.push_back(row);
  }
  if (objects.empty()) row_of(json::object());  // fills the columns
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", {{"resourceVersion", resource_version}}},
          {"columnDefinitions", cols},
          {"rows", rows}};
}

}  // namespace orch::fake_kube
