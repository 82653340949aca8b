// orch_kube_parse: Nodes (health in words) and resource quantities.
#include "adapters/kubernetes/kube_status_json.h"

namespace orch::kube {
using namespace detail;
namespace {

KubeNode read_node(Reader& r, const Json& obj, const std::string& p,
                   std::string_view gpu_resource) {
  KubeNode node;
  const Json* metadata = nullptr;
  node.info.name = read_name(r, obj, p, &metadata);
  if (!r.ok()) return node;
  node.resource_version = r.str(*metadata, "resourceVersion", at(p, "metadata.resourceVersion"));
  if (const Json* labels = r.object(*metadata, "labels", at(p, "metadata.labels"))) {
    node.gpu_product = r.str(*labels, kGpuProductLabel,
                             at(p, "metadata.labels[" + std::string(kGpuProductLabel) + "]"));
  }

  if (const Json* spec = r.object(obj, "spec", at(p, "spec"))) {
    node.unschedulable = r.boolean(*spec, "unschedulable", at(p, "spec.unschedulable"));
    if (const Json* taints = r.array(*spec, "taints", at(p, "spec.taints"))) {
      for (std::size_t i = 0; i < taints->size() && r.ok(); ++i) {
        const Json& t = (*taints)[i];
        std::string tp = at(p, "spec.taints", i);
        if (!t.is_object()) {
          r.fail(tp, "an object", t);
          break;
        }
        KubeTaint taint;
        taint.key = r.str(t, "key", at(tp, "key"));
        taint.value = r.str(t, "value", at(tp, "value"));
        taint.effect = r.str(t, "effect", at(tp, "effect"));
        node.taints.push_back(std::move(taint));
      }
    }
  }

  if (const Json* status = r.object(obj, "status", at(p, "status"))) {
    if (const Json* alloc = r.object(*status, "allocatable", at(p, "status.allocatable"))) {
      const Json* q = r.member(*alloc, gpu_resource);
      std::string qp = at(p, "status.allocatable[" + std::string(gpu_resource) + "]");
      if (q != nullptr && q->is_string()) {
        auto gpus = parse_whole_quantity(q->get<std::string>());
        if (gpus) {
          node.info.gpus = *gpus;
        } else {
          r.fail_text(qp + ": " + gpus.error().message);
        }
      } else if (q != nullptr && q->is_number_integer() && q->get<std::int64_t>() >= 0 &&
                 q->get<std::int64_t>() <= INT_MAX) {
        node.info.gpus = static_cast<int>(q->get<std::int64_t>());
      } else if (q != nullptr) {
        r.fail(qp, "a quantity such as \"8\"", *q);
      }
    }
    node.conditions = read_conditions(r, *status, at(p, "status"));
  }
  if (!r.ok()) return node;

  // Health, and what is wrong in words.
  std::vector<std::string> problems;
  const KubeCondition* ready = find_condition(node.conditions, "Ready");
  node.ready = ready != nullptr ? ready->status : "";
  if (ready == nullptr) {
    problems.emplace_back("no Ready condition");
  } else if (ready->status != "True") {
    std::string head =
        ready->status == "False" ? "NotReady" : "NotReady (Ready=" + ready->status + ")";
    std::string why = reason_and_message(ready->reason, ready->message);
    problems.push_back(why.empty() ? head : head + ": " + why);
  }
  if (node.unschedulable) problems.emplace_back("unschedulable (cordoned)");
  bool tainted = false;
  for (const KubeTaint& t : node.taints) {
    if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
    // GKE taints every GPU node nvidia.com/gpu=present:NoSchedule to keep other pods off;
    // attempts tolerate exactly that (kube_manifest.cpp). Any other value (an operator's
    // nvidia.com/gpu=broken) is a problem.
    if (t.key == gpu_resource && t.value == "present" && t.effect == "NoSchedule") continue;
    tainted = true;
    if (node.unschedulable && t.key == "node.kubernetes.io/unschedulable") continue;
    if (node.ready != "True" &&
        (t.key == "node.kubernetes.io/not-ready" || t.key == "node.kubernetes.io/unreachable")) {
      continue;
    }
    problems.push_back("taint " + t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect);
  }
  node.info.healthy = node.ready == "True" && !node.unschedulable && !tainted;
  for (const auto& what : problems) {
    node.info.reason += (node.info.reason.empty() ? "" : "; ") + what;
  }
  return node;
}

}  // namespace

Result<int> parse_whole_quantity(std::string_view quantity) {
  auto bad = [&](const std::string& why) {
    return make_error(ErrorKind::invalid,
                      "quantity '" + quote(quantity) + "' is not a whole number: " + why);
  };
  std::size_t digits = 0;
  while (digits < quantity.size() && quantity[digits] >= '0' && quantity[digits] <= '9') {
    ++digits;
  }
  if (digits == 0) return bad("it must start with a digit");
  std::string_view suffix = quantity.substr(digits);
  static const std::pair<std::string_view, std::uint64_t> kSuffixes[] = {
      {"", 1},
      {"k", 1000ULL},
      {"M", 1000ULL * 1000},
      {"G", 1000ULL * 1000 * 1000},
      {"T", 1000ULL * 1000 * 1000 * 1000},
      {"P", 1000ULL * 1000 * 1000 * 1000 * 1000},
      {"E", 1000ULL * 1000 * 1000 * 1000 * 1000 * 1000},
      {"Ki", 1ULL << 10u},
      {"Mi", 1ULL << 20u},
      {"Gi", 1ULL << 30u},
      {"Ti", 1ULL << 40u},
      {"Pi", 1ULL << 50u},
      {"Ei", 1ULL << 60u},
  };
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    value = value * 10 + static_cast<std::uint64_t>(quantity[i] - '0');
    if (value > static_cast<std::uint64_t>(INT_MAX) * 1000) return bad("it is too large");
  }
  if (suffix == "m") {
    if (value % 1000 != 0) return bad("it is a fraction");
    return static_cast<int>(value / 1000);
  }
  for (const auto& [name, factor] : kSuffixes) {
    if (suffix != name) continue;
    if (value != 0 && factor > static_cast<std::uint64_t>(INT_MAX) / value) {
      return bad("it is too large");
    }
    std::uint64_t total = value * factor;
    if (total > static_cast<std::uint64_t>(INT_MAX)) return bad("it is too large");
    return static_cast<int>(total);
  }
  return bad("unknown suffix '" + quote(suffix) + "'");
}

Result<std::vector<KubeNode>> parse_node_list(std::string_view json,
                                              std::string_view gpu_resource) {
  return parse_list<KubeNode>(json, "NodeList",
                              [&](Reader& r, const Json& o, const std::string& p) {
                                return read_node(r, o, p, gpu_resource);
                              });
}

Result<KubeNode> parse_node(std::string_view json, std::string_view gpu_resource) {
  return parse_one<KubeNode>(json, "Node", [&](Reader& r, const Json& o, const std::string& p) {
    return read_node(r, o, p, gpu_resource);
  });
}

std::vector<NodeInfo> node_infos(const std::vector<KubeNode>& nodes) {
  std::vector<NodeInfo> out;
  out.reserve(nodes.size());
  for (const auto& n : nodes) out.push_back(n.info);
  return out;
}

}  // namespace orch::kube
