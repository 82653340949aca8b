#include "adapters/kubernetes/kube_pod_settings.h"

#include <string>

namespace orch::kube {

using Json = nlohmann::ordered_json;

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
  return Ok{};
}

}  // namespace orch::kube
