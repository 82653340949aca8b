#include "adapters/kubernetes/kube_helper_pod.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "adapters/kubernetes/kube_manifest.h"
#include "adapters/kubernetes/kube_pod_settings.h"

namespace orch::kube {
namespace {

using Json = nlohmann::ordered_json;

// The pod both kinds share; `command` runs under /bin/sh -c.
Result<Json> helper_pod(const ClusterSpec& cluster, const std::string& namespace_,
                        const std::string& name, const std::string& kind,
                        const std::vector<std::string>& command, int deadline_s) {
  PodSettings pod = cluster.kubernetes.pod;
  if (!cluster.kubernetes.helper_image.empty()) pod.image = cluster.kubernetes.helper_image;
  if (pod.image.empty()) {
    return make_error(ErrorKind::invalid, "cluster '" + cluster.name +
                                              "' names no image for its helper pods " +
                                              "(kubernetes.helper_image or kubernetes.image)");
  }
  Json container = {{"name", std::string(kHelperContainer)}, {"command", command}};
  Json spec = {
      {"restartPolicy", "Never"},
      {"terminationGracePeriodSeconds", 0},
      {"activeDeadlineSeconds", deadline_s},
      {"enableServiceLinks", false},
      {"automountServiceAccountToken", false},
  };
  if (auto ok = apply_pod_settings(pod, PodKind::helper, container, spec); !ok) {
    return ok.error();
  }
  spec["automountServiceAccountToken"] = false;  // a helper never talks to the API
  spec.erase("serviceAccountName");
  spec["containers"] = Json::array({container});
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", namespace_},
                {"labels", {{std::string(kHelperLabel), kind}}}}},
              {"spec", spec}};
}

std::string shortest(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::string storage_helper_name(const std::string& site) {
  return "orch-storage-" + hash8(site);
}

Result<std::string> storage_helper_body(const ClusterSpec& cluster, const std::string& namespace_) {
  auto pod = helper_pod(cluster, namespace_, storage_helper_name(cluster.name), "storage",
                        {"/bin/sh", "-c", "exec sleep " + std::to_string(kHelperLifetimeS)},
                        kHelperLifetimeS);
  if (!pod) return pod.error();
  return pod->dump();
}

Result<std::vector<ProbePod>> probe_pods(const ClusterSpec& cluster, const std::string& namespace_,
                                         const ProbeRequest& request,
                                         const std::vector<std::string>& nodes,
                                         const std::string& dir, int gpus_per_node) {
  const auto invalid = [](const std::string& why) { return make_error(ErrorKind::invalid, why); };
  if (request.token.empty() || request.token.size() > 63 ||
      request.token.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789._-") != std::string::npos) {
    return invalid("probe token '" + request.token + "' is not a label value");
  }
  const std::string prefix = job_name_for_token(request.token);
  if (dir.empty() || dir.front() != '/') {
    return invalid("the probe directory '" + dir + "' is not an absolute path");
  }
  if (request.io_bytes < 0 || !(request.compute_s >= 0) || !(request.timeout_s > 0)) {
    return invalid("probe " + request.token + ": io_bytes and compute_s must not be negative " +
                   "and the round's time must be positive");
  }
  std::vector<ProbePod> out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!is_dns_subdomain(nodes[i])) return invalid("node name '" + nodes[i] + "' is not valid");
    ProbePod p;
    p.name = prefix + "-" + std::to_string(i);
    p.node = nodes[i];
    auto pod =
        helper_pod(cluster, namespace_, p.name, "probe",
                   {cluster.kubernetes.agent, "probe", "--dir", dir, "--io-bytes",
                    std::to_string(request.io_bytes), "--compute-s", shortest(request.compute_s)},
                   std::max(1, static_cast<int>(std::ceil(request.timeout_s))));
    if (!pod) return pod.error();
    Json& spec = (*pod)["spec"];
    Json& container = spec["containers"][0];
    container["env"] =
        Json::array({{{"name", "ORCH_NODE_NAME"},
                      {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}}});
    container["workingDir"] = dir;
    request_gpus(cluster.kubernetes.gpu_resource, gpus_per_node, container, spec);
    // Pinned: required node affinity on the node's own name (not nodeName, which would skip
    // the scheduler's checks of resources and taints).
    spec["affinity"] = {
        {"nodeAffinity",
         {{"requiredDuringSchedulingIgnoredDuringExecution",
           {{"nodeSelectorTerms",
             Json::array({{{"matchFields", Json::array({{{"key", "metadata.name"},
                                                         {"operator", "In"},
                                                         {"values", {nodes[i]}}}})}}})}}}}}};
    (*pod)["metadata"]["labels"][std::string(kTokenLabel)] = request.token;
    p.body = pod->dump();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace orch::kube
