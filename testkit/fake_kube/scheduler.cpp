#include "testkit/fake_kube/scheduler.h"

#include <map>

#include "testkit/fake_kube/kube_json.h"
#include "testkit/fake_kube/pod_status.h"
#include "testkit/fake_kube/selectors.h"

namespace orch::fake_kube {
namespace {

using nlohmann::json;

bool toleration_matches(const json& t, const json& taint) {
  const std::string effect = string_at(t, {"effect"});
  if (!effect.empty() && effect != string_at(taint, {"effect"})) return false;
  const std::string key = string_at(t, {"key"});
  const std::string op = string_at(t, {"operator"}, "Equal");
  if (key.empty()) return op == "Exists";
  if (key != string_at(taint, {"key"})) return false;
  return op == "Exists" || string_at(t, {"value"}) == string_at(taint, {"value"});
}

bool affinity_matches(const json& pod, const json& node) {
  const json& selector = at_path(pod, {"spec", "nodeSelector"});
  if (selector.is_object()) {
    const json& labels = at_path(node, {"metadata", "labels"});
    for (const auto& [k, v] : selector.items()) {
      if (!v.is_string() || string_at(labels, {k.c_str()}) != v.get<std::string>()) return false;
    }
  }
  const json& terms =
      at_path(pod, {"spec", "affinity", "nodeAffinity",
                    "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"});
  if (!terms.is_array()) return true;
  for (const json& term : terms) {  // terms are ORed
    if (node_selector_term_matches(term, node)) return true;
  }
  return false;
}

// Required pod anti-affinity by hostname (the only topology the fake knows): whether a pod that
// matches one of the pod's terms already runs on this node (pods not yet finished, the pod
// itself left out).
bool anti_affinity_violated(const json& pod, const std::string& node,
                            const std::vector<json>& pods) {
  const json& terms = at_path(pod, {"spec", "affinity", "podAntiAffinity",
                                    "requiredDuringSchedulingIgnoredDuringExecution"});
  if (!terms.is_array()) return false;
  const std::string self = string_at(pod, {"metadata", "name"});
  for (const json& term : terms) {
    if (string_at(term, {"topologyKey"}) != "kubernetes.io/hostname") continue;
    const LabelSelector selector = LabelSelector::from_json(at_path(term, {"labelSelector"}));
    for (const json& other : pods) {
      if (pod_terminal(other)) continue;
      if (string_at(other, {"metadata", "name"}) == self) continue;
      if (string_at(other, {"spec", "nodeName"}) != node) continue;
      if (selector.matches(at_path(other, {"metadata", "labels"}))) return true;
    }
  }
  return false;
}

// The first taint the pod does not tolerate, or null.
json untolerated_taint(const json& pod, const json& node) {
  const json& tolerations = at_path(pod, {"spec", "tolerations"});
  const json& taints = at_path(node, {"spec", "taints"});
  if (taints.is_array()) {
    for (const json& taint : taints) {
      const std::string effect = string_at(taint, {"effect"});
      if (effect != "NoSchedule" && effect != "NoExecute") continue;
      if (!tolerates(tolerations, taint)) return taint;
    }
  }
  if (!node_ready(node)) {
    json taint = {{"key", "node.kubernetes.io/not-ready"}, {"effect", "NoSchedule"}};
    if (!tolerates(tolerations, taint)) return taint;
  }
  return nullptr;
}

}  // namespace

bool node_ready(const json& node) {
  const json& conditions = at_path(node, {"status", "conditions"});
  if (!conditions.is_array()) return false;
  for (const json& c : conditions) {
    if (string_at(c, {"type"}) == "Ready") return string_at(c, {"status"}) == "True";
  }
  return false;
}

bool tolerates(const json& tolerations, const json& taint) {
  if (!tolerations.is_array()) return false;
  for (const json& t : tolerations) {
    if (toleration_matches(t, taint)) return true;
  }
  return false;
}

Placement schedule_pod(const json& pod, const std::vector<json>& nodes,
                       const std::vector<json>& pods) {
  std::map<std::string, long long> used;
  for (const json& p : pods) {
    const std::string phase = string_at(p, {"status", "phase"});
    if (phase == "Succeeded" || phase == "Failed") continue;
    const std::string node = string_at(p, {"spec", "nodeName"});
    if (!node.empty()) used[node] += pod_gpus(p);
  }
  const long long want = pod_gpus(pod);
  std::map<std::string, int> reasons;  // reason -> how many nodes
  Placement best;
  long long best_free = -1;
  for (const json& node : nodes) {
    const std::string name = string_at(node, {"metadata", "name"});
    if (at_path(node, {"spec", "unschedulable"}) == true &&
        !tolerates(at_path(pod, {"spec", "tolerations"}),
                   {{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}})) {
      ++reasons["node(s) were unschedulable"];
      continue;
    }
    if (!affinity_matches(pod, node)) {
      ++reasons["node(s) didn't match Pod's node affinity/selector"];
      continue;
    }
    if (anti_affinity_violated(pod, name, pods)) {
      ++reasons["node(s) didn't match pod anti-affinity rules"];
      continue;
    }
    if (const json taint = untolerated_taint(pod, node); !taint.is_null()) {
      ++reasons["node(s) had untolerated taint {" + string_at(taint, {"key"}) + ": " +
                string_at(taint, {"value"}) + "}"];
      continue;
    }
    const long long allocatable =
        parse_count(at_path(node, {"status", "allocatable", kGpuResource}));
    const long long free = (allocatable < 0 ? 0 : allocatable) - used[name];
    if (want > free) {
      ++reasons[std::string("Insufficient ") + kGpuResource];
      continue;
    }
    if (free > best_free) {
      best_free = free;
      best.node = name;
    }
  }
  if (!best.node.empty()) return best;
  const std::string total = std::to_string(nodes.size());
  std::string message = "0/" + total + " nodes are available";
  std::string sep = ": ";
  for (const auto& [reason, count] : reasons) {
    message += sep + std::to_string(count) + " " + reason;
    sep = ", ";
  }
  message += ". preemption: 0/" + total + " nodes are available: " + total +
             " Preemption is not helpful for scheduling.";
  best.message = message;
  return best;
}

}  // namespace orch::fake_kube
