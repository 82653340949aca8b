#include "adapters/kubernetes/kube_pod_settings.h"

#include <string>

namespace orch::kube {

using Json = nlohmann::ordered_json;

namespace {

void apply_security(const PodSecurity& s, Json& container, Json& pod_spec) {
  Json sc = Json::object();
  if (!s.capabilities_add.empty()) sc["capabilities"] = {{"add", s.capabilities_add}};
  if (s.privileged) sc["privileged"] = *s.privileged;
  if (s.run_as_user) sc["runAsUser"] = *s.run_as_user;
  if (s.run_as_group) sc["runAsGroup"] = *s.run_as_group;
  if (!sc.empty()) container["securityContext"] = std::move(sc);
  if (s.host_network.value_or(false)) {
    pod_spec["hostNetwork"] = true;
    pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet";
  }
}

}  // namespace

void request_gpus(const std::string& gpu_resource, int gpus, Json& container, Json& pod_spec) {
  if (gpus <= 0) return;
  container["resources"]["limits"][gpu_resource] = std::to_string(gpus);
  Json& tolerations = pod_spec["tolerations"];
  if (!tolerations.is_array()) tolerations = Json::array();
  tolerations.push_back({{"key", gpu_resource},
                         {"operator", "Equal"},
                         {"value", "present"},
                         {"effect", "NoSchedule"}});
}

Result<void> apply_pod_settings(const PodSettings& pod, PodKind kind, Json& container,
                                Json& pod_spec) {
  container["image"] = pod.image;
  Json volumes = Json::array();
  Json mounts = Json::array();
  for (const auto& v : pod.volumes) {
    if (v.name == kShmVolume) {
      return make_error(ErrorKind::invalid, std::string("volume name ") + kShmVolume +
                                                " is orchestrate's own (shm_size); rename it");
    }
    Json volume = {{"name", v.name}};
    if (!v.claim.empty()) {
      volume["persistentVolumeClaim"] = {{"claimName", v.claim}, {"readOnly", v.read_only}};
    } else {
      volume["hostPath"] = {{"path", v.host_path}, {"type", "Directory"}};
    }
    volumes.push_back(std::move(volume));
    mounts.push_back({{"name", v.name}, {"mountPath", v.mount}, {"readOnly", v.read_only}});
  }
  if (kind == PodKind::job && !pod.shm_size.empty()) {
    volumes.push_back(
        {{"name", kShmVolume}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", pod.shm_size}}}});
    mounts.push_back({{"name", kShmVolume}, {"mountPath", "/dev/shm"}});
  }
  if (!volumes.empty()) {
    pod_spec["volumes"] = std::move(volumes);
    container["volumeMounts"] = std::move(mounts);
  }
  if (kind == PodKind::job && !pod.extra_resources.empty()) {
    Json& limits = container["resources"]["limits"];
    for (const auto& [name, quantity] : pod.extra_resources) limits[name] = quantity;
  }
  if (!pod.image_pull_secrets.empty()) {
    Json secrets = Json::array();
    for (const auto& s : pod.image_pull_secrets) secrets.push_back({{"name", s}});
    pod_spec["imagePullSecrets"] = std::move(secrets);
  }
  if (!pod.service_account.empty()) {
    pod_spec["serviceAccountName"] = pod.service_account;
    // Named on purpose: the job acts as that account (workload identity, IRSA), so its token
    // is mounted; without one the pod gets none.
    pod_spec["automountServiceAccountToken"] = true;
  }
  if (!pod.node_selector.empty()) pod_spec["nodeSelector"] = pod.node_selector;
  if (!pod.tolerations.empty()) {
    Json& tolerations = pod_spec["tolerations"];
    if (!tolerations.is_array()) tolerations = Json::array();
    for (const auto& t : pod.tolerations) {
      Json one = {{"operator", t.op}};
      if (!t.key.empty()) one["key"] = t.key;
      if (!t.value.empty()) one["value"] = t.value;
      if (!t.effect.empty()) one["effect"] = t.effect;
      tolerations.push_back(std::move(one));
    }
  }
  if (kind == PodKind::job && !pod.priority_class.empty()) {
    pod_spec["priorityClassName"] = pod.priority_class;
  }
  if (kind == PodKind::job) apply_security(pod.security, container, pod_spec);
  return Ok{};
}

Result<void> check_job_security(const PodSettings& job, const ClusterSpec& cluster) {
  const PodSecurity& own = job.security;
  const PodSecurity& granted = cluster.kubernetes.pod.security;
  const auto refuse = [&](const std::string& what) -> Result<void> {
    return make_error(ErrorKind::invalid,
                      "cluster '" + cluster.name + "' does not let jobs set " + what +
                          ": it gives the pods the node; the cluster's own kubernetes section "
                          "must set it for its jobs to");
  };
  if (own.privileged.value_or(false) && !granted.privileged.value_or(false)) {
    return refuse("security_context.privileged: true");
  }
  if (own.host_network.value_or(false) && !granted.host_network.value_or(false)) {
    return refuse("host_network: true");
  }
  return Ok{};
}

void apply_pod_metadata(const PodSettings& pod, const TopologyHint& topology, Json& metadata) {
  for (const char* part : {"labels", "annotations"}) {
    if (!metadata[part].is_object()) metadata[part] = Json::object();
  }
  for (const auto& [key, value] : pod.labels) {
    if (!metadata["labels"].contains(key)) metadata["labels"][key] = value;
  }
  Json& annotations = metadata["annotations"];
  for (const auto& [key, value] : pod.annotations) {
    if (!annotations.contains(key)) annotations[key] = value;
  }
  if (!topology.level.empty()) {
    // The hint is the job's word on its topology: it replaces one the pod settings wrote.
    annotations.erase(kKueueRequiredTopology);
    annotations.erase(kKueuePreferredTopology);
    annotations[topology.required ? kKueueRequiredTopology : kKueuePreferredTopology] =
        topology.level;
  }
}

}  // namespace orch::kube
