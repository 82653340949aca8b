#include "scheduler/model/pod_settings.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace orch {

PodSettings merge_pod_settings(const PodSettings& cluster, const PodSettings& job) {
  PodSettings out = cluster;
  if (!job.image.empty()) out.image = job.image;
  if (!job.service_account.empty()) out.service_account = job.service_account;
  if (!job.shm_size.empty()) out.shm_size = job.shm_size;
  if (!job.priority_class.empty()) out.priority_class = job.priority_class;
  for (const auto& s : job.image_pull_secrets) {
    if (std::find(out.image_pull_secrets.begin(), out.image_pull_secrets.end(), s) ==
        out.image_pull_secrets.end()) {
      out.image_pull_secrets.push_back(s);
    }
  }
  for (const auto& [k, v] : job.node_selector) out.node_selector[k] = v;
  for (const auto& [k, v] : job.extra_resources) out.extra_resources[k] = v;
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
