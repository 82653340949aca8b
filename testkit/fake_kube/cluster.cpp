#include "testkit/fake_kube/cluster.h"

#include <algorithm>
#include <stdexcept>

#include "testkit/fake_kube/kube_json.h"
#include "testkit/fake_kube/pod_status.h"
#include "testkit/fake_kube/scheduler.h"

namespace orch::fake_kube {
namespace {

using nlohmann::json;

std::string name_of(const json& o) {
  return string_at(o, {"metadata", "name"});
}

// Node conditions carry lastHeartbeatTime (not lastProbeTime); the transition time moves only
// when the status changes.
void set_node_condition(json& node, const std::string& type, const std::string& status,
                        const std::string& reason, const std::string& message) {
  json& conditions = node["status"]["conditions"];
  if (!conditions.is_array()) conditions = json::array();
  const std::string now = now_rfc3339();
  json next = {{"type", type},       {"status", status},         {"reason", reason},
               {"message", message}, {"lastHeartbeatTime", now}, {"lastTransitionTime", now}};
  for (json& c : conditions) {
    if (string_at(c, {"type"}) != type) continue;
    if (string_at(c, {"status"}) == status) next["lastTransitionTime"] = c["lastTransitionTime"];
    c = next;
    return;
  }
  conditions.push_back(next);
}

void set_conditions_healthy(json& node) {
  set_node_condition(node, "MemoryPressure", "False", "KubeletHasSufficientMemory",
                     "kubelet has sufficient memory available");
  set_node_condition(node, "DiskPressure", "False", "KubeletHasNoDiskPressure",
                     "kubelet has no disk pressure");
  set_node_condition(node, "PIDPressure", "False", "KubeletHasSufficientPID",
                     "kubelet has sufficient PID available");
  set_node_condition(node, "Ready", "True", "KubeletReady", "kubelet is posting ready status");
}

void set_taints(json& node, const std::string& key) {
  json kept = json::array();
  const json& taints = at_path(node, {"spec", "taints"});
  if (taints.is_array()) {
    for (const json& t : taints) {
      const std::string k = string_at(t, {"key"});
      if (k != "node.kubernetes.io/not-ready" && k != "node.kubernetes.io/unreachable") {
        kept.push_back(t);
      }
    }
  }
  if (!key.empty()) {
    kept.push_back({{"key", key}, {"effect", "NoSchedule"}});
    kept.push_back({{"key", key}, {"effect", "NoExecute"}, {"timeAdded", now_rfc3339()}});
  }
  if (kept.empty()) {
    node["spec"].erase("taints");
  } else {
    node["spec"]["taints"] = kept;
  }
}

json namespace_object(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/metadata.name", name}}}}},
          {"spec", {{"finalizers", json::array({"kubernetes"})}}},
          {"status", {{"phase", "Active"}}}};
}

}  // namespace

std::vector<NodeConfig> parse_node_configs(const json& list) {
  if (!list.is_array()) throw std::runtime_error("nodes: expected a JSON array of nodes");
  std::vector<NodeConfig> out;
  for (const json& n : list) {
    NodeConfig c;
    c.name = string_at(n, {"name"});
    if (c.name.empty()) throw std::runtime_error("nodes: a node has no name: " + n.dump());
    c.gpus = static_cast<int>(int_at(n, {"gpus"}, c.gpus));
    c.product = string_at(n, {"product"}, c.product);
    if (n.contains("ready")) c.ready = n["ready"] == true;
    if (n.contains("unschedulable")) c.unschedulable = n["unschedulable"] == true;
    if (n.contains("labels") && n["labels"].is_object()) c.labels = n["labels"];
    if (n.contains("taints") && n["taints"].is_array()) c.taints = n["taints"];
    if (n.contains("cpu_share")) {
      c.cpu_share = n["cpu_share"].is_number() ? n["cpu_share"].get<double>() : -1;
      if (!(c.cpu_share > 0 && c.cpu_share <= 1)) {
        throw std::runtime_error("nodes: cpu_share must be a number in (0, 1]: " + n.dump());
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

NodeConfig parse_node_flag(const std::string& text) {
  NodeConfig c;
  const auto a = text.find(':');
  c.name = text.substr(0, a);
  if (c.name.empty()) throw std::runtime_error("--node " + text + ": no name");
  if (a != std::string::npos) {
    const auto b = text.find(':', a + 1);
    try {
      c.gpus = std::stoi(text.substr(a + 1, b - a - 1));
    } catch (const std::exception&) {
      throw std::runtime_error("--node " + text + ": expected NAME:GPUS[:PRODUCT]");
    }
    if (b != std::string::npos) c.product = text.substr(b + 1);
  }
  return c;
}

std::vector<NodeConfig> uniform_nodes(int count, int gpus) {
  std::vector<NodeConfig> out;
  for (int i = 0; i < count; ++i) {
    NodeConfig c;
    c.name = "node-" + std::to_string(i);
    c.gpus = gpus;
    out.push_back(std::move(c));
  }
  return out;
}

json Cluster::node_object(const NodeConfig& c) {
  const std::string gpus = std::to_string(c.gpus);
  json labels = {{"kubernetes.io/hostname", c.name},   {"kubernetes.io/os", "linux"},
                 {"kubernetes.io/arch", "amd64"},      {"beta.kubernetes.io/os", "linux"},
                 {"beta.kubernetes.io/arch", "amd64"}, {"nvidia.com/gpu.product", c.product},
                 {"nvidia.com/gpu.count", gpus}};
  if (c.cpu_share < 1) labels[kCpuShareLabel] = std::to_string(c.cpu_share);
  for (const auto& [k, v] : c.labels.items()) labels[k] = v;
  const json resources = {{"cpu", "64"},
                          {"memory", "527952176Ki"},
                          {"ephemeral-storage", "1055762868Ki"},
                          {"pods", "110"},
                          {kGpuResource, gpus}};
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", c.name}, {"labels", labels}}},
               {"spec", json::object()},
               {"status",
                {{"capacity", resources},
                 {"allocatable", resources},
                 {"addresses", json::array({{{"type", "InternalIP"}, {"address", "127.0.0.1"}},
                                            {{"type", "Hostname"}, {"address", c.name}}})},
                 {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
                 {"nodeInfo",
                  {{"architecture", "amd64"},
                   {"bootID", new_uid()},
                   {"containerRuntimeVersion", "containerd://1.7.24"},
                   {"kernelVersion", "6.1.0-fake"},
                   {"kubeProxyVersion", "v1.32.0"},
                   {"kubeletVersion", "v1.32.0"},
                   {"machineID", random_hex(32)},
                   {"operatingSystem", "linux"},
                   {"osImage", "Debian GNU/Linux 12 (bookworm)"},
                   {"systemUUID", new_uid()}}}}}};
  set_conditions_healthy(node);
  json taints = c.taints;
  if (c.unschedulable) {
    node["spec"]["unschedulable"] = true;
    taints.push_back({{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}});
  }
  if (!taints.empty()) node["spec"]["taints"] = taints;
  if (!c.ready) {
    set_node_condition(node, "Ready", "False", "KubeletNotReady",
                       "container runtime status check may not have completed yet");
    set_taints(node, "node.kubernetes.io/not-ready");
  }
  return node;
}

Cluster::Cluster(ClusterOptions options)
    : options_(std::move(options)),
      store_(options_.history_limit),
      kubelet_(store_, options_.state_dir),
      jobs_(store_) {
  kubelet_.set_images(ImageMap{options_.image_map, options_.agent_binary});
}

Cluster::~Cluster() {
  stop();
}

void Cluster::start(int api_port) {
  std::lock_guard lock(mu_);
  if (started_) return;
  started_ = true;
  kubelet_.set_api_port(api_port);
  std::vector<std::string> namespaces = {"default", "kube-system"};
  for (const auto& ns : options_.namespaces) {
    if (std::find(namespaces.begin(), namespaces.end(), ns) == namespaces.end()) {
      namespaces.push_back(ns);
    }
  }
  for (const auto& ns : namespaces) store_.create("namespaces", namespace_object(ns));
  for (const auto& n : options_.nodes) store_.create("nodes", node_object(n));
  thread_ = std::thread([this] { loop(); });
}

void Cluster::stop() {
  {
    std::lock_guard lock(mu_);
    if (!started_ || stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  kubelet_.stop_all();
  store_.close_watchers();
}

void Cluster::kick() {
  {
    std::lock_guard lock(mu_);
    kicked_ = true;
  }
  cv_.notify_all();
}

void Cluster::loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    tick();
    cv_.wait_for(lock, options_.tick, [this] { return stopping_ || kicked_; });
    kicked_ = false;
  }
}

void Cluster::tick() {
  kueue_.admit(store_);
  jobs_.reconcile();
  if (garbage_collection_) jobs_.collect_garbage();
  schedule();
  kubelet_.sync();
}

void Cluster::schedule() {
  const std::vector<json> nodes = store_.all("nodes");
  std::vector<json> pods = store_.all("pods");
  for (json& pod : pods) {
    if (!string_at(pod, {"spec", "nodeName"}).empty() || pod_terminal(pod)) continue;
    if (!at_path(pod, {"metadata", "deletionTimestamp"}).is_null()) continue;
    const Placement placement = schedule_pod(pod, nodes, pods);
    const std::string ns = string_at(pod, {"metadata", "namespace"});
    if (!placement.node.empty()) {
      pod["spec"]["nodeName"] = placement.node;  // counts in this pass's GPU accounting
      store_.update("pods", ns, name_of(pod), [&](json& p) {
        p["spec"]["nodeName"] = placement.node;
        set_condition(p, "PodScheduled", "True");
      });
    } else {
      store_.update("pods", ns, name_of(pod), [&](json& p) {
        set_condition(p, "PodScheduled", "False", "Unschedulable", placement.message);
      });
    }
  }
}

std::string Cluster::set_node_not_ready(const std::string& node, bool lost) {
  return locked([&]() -> std::string {
    auto updated = store_.update("nodes", "", node, [&](json& n) {
      if (lost) {
        for (const char* type : {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}) {
          set_node_condition(n, type, "Unknown", "NodeStatusUnknown",
                             "Kubelet stopped posting node status.");
        }
        set_taints(n, "node.kubernetes.io/unreachable");
      } else {
        set_node_condition(n, "Ready", "False", "KubeletNotReady", "container runtime is down");
        set_taints(n, "node.kubernetes.io/not-ready");
      }
    });
    if (!updated) return "nodes \"" + node + "\" not found";
    if (lost) kubelet_.node_lost(node);
    return "";
  });
}

std::string Cluster::freeze_node(const std::string& node) {
  return locked([&]() -> std::string {
    if (!store_.get("nodes", "", node)) return "nodes \"" + node + "\" not found";
    kubelet_.freeze(node);
    return "";
  });
}

std::string Cluster::set_node_ready(const std::string& node) {
  return locked([&]() -> std::string {
    kubelet_.thaw(node);
    auto updated = store_.update("nodes", "", node, [&](json& n) {
      set_conditions_healthy(n);
      set_taints(n, "");
    });
    return updated ? "" : "nodes \"" + node + "\" not found";
  });
}

std::string Cluster::add_node(const NodeConfig& node) {
  return locked([&]() -> std::string {
    try {
      store_.create("nodes", node_object(node));
    } catch (const ApiError&) {
      return "nodes \"" + node.name + "\" already exists";
    }
    return "";
  });
}

}  // namespace orch::fake_kube
