#include "scheduler/model/pod_settings.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace orch {
namespace {

// Appends the items of `more` that `out` lacks.
template <typename T>
void add_missing(std::vector<T>& out, const std::vector<T>& more) {
  for (const auto& item : more) {
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
}

nlohmann::json security_to_json(const PodSecurity& s) {
  nlohmann::json j = nlohmann::json::object();
  if (!s.capabilities_add.empty()) j["capabilities"] = {{"add", s.capabilities_add}};
  if (s.privileged) j["privileged"] = *s.privileged;
  if (s.run_as_user) j["run_as_user"] = *s.run_as_user;
  if (s.run_as_group) j["run_as_group"] = *s.run_as_group;
  return j;
}

PodSecurity security_from_json(const nlohmann::json& pod) {
  PodSecurity s;
  const nlohmann::json sc = pod.value("security_context", nlohmann::json::object());
  if (sc.contains("capabilities")) {
    s.capabilities_add = sc.at("capabilities").value("add", std::vector<std::string>{});
  }
  if (sc.contains("privileged")) s.privileged = sc.at("privileged").get<bool>();
  if (sc.contains("run_as_user")) s.run_as_user = sc.at("run_as_user").get<std::int64_t>();
  if (sc.contains("run_as_group")) s.run_as_group = sc.at("run_as_group").get<std::int64_t>();
  if (pod.contains("host_network")) s.host_network = pod.at("host_network").get<bool>();
  return s;
}

}  // namespace

PodSettings merge_pod_settings(const PodSettings& cluster, const PodSettings& job) {
  PodSettings out = cluster;
  if (!job.image.empty()) out.image = job.image;
  if (!job.service_account.empty()) out.service_account = job.service_account;
  if (!job.shm_size.empty()) out.shm_size = job.shm_size;
  if (!job.priority_class.empty()) out.priority_class = job.priority_class;
  add_missing(out.image_pull_secrets, job.image_pull_secrets);
  for (const auto& [k, v] : job.node_selector) out.node_selector[k] = v;
  for (const auto& [k, v] : job.extra_resources) out.extra_resources[k] = v;
  for (const auto& [k, v] : job.annotations) out.annotations[k] = v;
  for (const auto& [k, v] : job.labels) out.labels[k] = v;
  add_missing(out.security.capabilities_add, job.security.capabilities_add);
  if (job.security.privileged) out.security.privileged = job.security.privileged;
  if (job.security.run_as_user) out.security.run_as_user = job.security.run_as_user;
  if (job.security.run_as_group) out.security.run_as_group = job.security.run_as_group;
  if (job.security.host_network) out.security.host_network = job.security.host_network;
  for (const auto& t : job.tolerations) {
    if (std::find(out.tolerations.begin(), out.tolerations.end(), t) == out.tolerations.end()) {
      out.tolerations.push_back(t);
    }
  }
  for (const auto& v : job.volumes) {
    auto same = std::find_if(out.volumes.begin(), out.volumes.end(),
                             [&](const PodVolume& o) { return o.name == v.name; });
    if (same != out.volumes.end()) {
      *same = v;
    } else {
      out.volumes.push_back(v);
    }
  }
  return out;
}

nlohmann::json pod_settings_to_json(const PodSettings& pod) {
  // The keys of the `kubernetes:` section of a job file, empty values left out: a stored job
  // spec reads back through the YAML parser.
  nlohmann::json j = nlohmann::json::object();
  if (!pod.image.empty()) j["image"] = pod.image;
  if (!pod.image_pull_secrets.empty()) j["image_pull_secrets"] = pod.image_pull_secrets;
  if (!pod.service_account.empty()) j["service_account"] = pod.service_account;
  if (!pod.shm_size.empty()) j["shm_size"] = pod.shm_size;
  if (!pod.node_selector.empty()) j["node_selector"] = pod.node_selector;
  if (!pod.extra_resources.empty()) j["extra_resources"] = pod.extra_resources;
  if (!pod.priority_class.empty()) j["priority_class"] = pod.priority_class;
  if (!pod.annotations.empty()) j["annotations"] = pod.annotations;
  if (!pod.labels.empty()) j["labels"] = pod.labels;
  if (nlohmann::json sc = security_to_json(pod.security); !sc.empty()) {
    j["security_context"] = std::move(sc);
  }
  if (pod.security.host_network) j["host_network"] = *pod.security.host_network;
  if (!pod.tolerations.empty()) {
    nlohmann::json tolerations = nlohmann::json::array();
    for (const auto& t : pod.tolerations) {
      nlohmann::json one = {{"key", t.key}, {"operator", t.op}};
      if (!t.value.empty()) one["value"] = t.value;
      if (!t.effect.empty()) one["effect"] = t.effect;
      tolerations.push_back(std::move(one));
    }
    j["tolerations"] = std::move(tolerations);
  }
  if (!pod.volumes.empty()) {
    nlohmann::json volumes = nlohmann::json::array();
    for (const auto& v : pod.volumes) {
      nlohmann::json one = {{"name", v.name}, {"mount", v.mount}};
      if (!v.claim.empty()) one["claim"] = v.claim;
      if (!v.host_path.empty()) one["host_path"] = v.host_path;
      if (v.read_only) one["read_only"] = true;
      volumes.push_back(std::move(one));
    }
    j["volumes"] = std::move(volumes);
  }
  return j;
}

Result<PodSettings> pod_settings_from_json(const nlohmann::json& j) {
  try {
    PodSettings p;
    p.image = j.value("image", std::string());
    p.image_pull_secrets = j.value("image_pull_secrets", std::vector<std::string>{});
    p.service_account = j.value("service_account", std::string());
    p.shm_size = j.value("shm_size", std::string());
    p.node_selector = j.value("node_selector", std::map<std::string, std::string>{});
    p.extra_resources = j.value("extra_resources", std::map<std::string, std::string>{});
    p.priority_class = j.value("priority_class", std::string());
    p.annotations = j.value("annotations", std::map<std::string, std::string>{});
    p.labels = j.value("labels", std::map<std::string, std::string>{});
    p.security = security_from_json(j);
    for (const auto& t : j.value("tolerations", nlohmann::json::array())) {
      p.tolerations.push_back({t.value("key", std::string()),
                               t.value("operator", std::string("Exists")),
                               t.value("value", std::string()), t.value("effect", std::string())});
    }
    for (const auto& v : j.value("volumes", nlohmann::json::array())) {
      p.volumes.push_back({v.at("name").get<std::string>(), v.value("claim", std::string()),
                           v.value("host_path", std::string()), v.at("mount").get<std::string>(),
                           v.value("read_only", false)});
    }
    return p;
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorKind::invalid, std::string("not pod settings: ") + e.what());
  }
}

}  // namespace orch
