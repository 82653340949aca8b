#include "adapters/kubernetes/kube_agent_container.h"

#include <string>
#include <utility>

#include "adapters/kubernetes/kube_manifest.h"
#include "scheduler/common/http_url.h"
#include "scheduler/common/utf8.h"
#include "scheduler/model/flag_number.h"
#include "scheduler/model/launch_contract.h"
#include "scheduler/model/live_watch_spec.h"

namespace orch::kube {
namespace {

using Json = nlohmann::ordered_json;

Error invalid(std::string message) {
  return make_error(ErrorKind::invalid, std::move(message));
}

// The env entry of that name replaced, or appended.
void set_entry(Json& env, Json entry) {
  const std::string name = entry["name"].get<std::string>();
  for (Json& e : env) {
    if (e.value("name", "") == name) {
      e = std::move(entry);
      return;
    }
  }
  env.push_back(std::move(entry));
}

}  // namespace

bool agent_in_pods(const KubernetesSpec& k) {
  return k.agent_image != kNoAgentImage;
}

Result<void> check_agent_image(const ClusterSpec& cluster) {
  const std::string& image = cluster.kubernetes.agent_image;
  bool ok = !image.empty();
  for (char c : image) ok = ok && static_cast<unsigned char>(c) > 0x20 && c != 0x7f;
  if (ok) return Ok{};
  return invalid("kubernetes.agent_image of cluster '" + cluster.name + "' is '" + image +
                 "': give the image built from agents/Dockerfile (such as " + kDefaultAgentImage +
                 "), or none to run pods without the agent");
}

Result<void> check_push(const PushLaunch& push, const ClusterSpec& cluster) {
  const std::string where = "cluster '" + cluster.name + "': ";
  auto url = parse_server_url(push.url);
  if (!url || !url->tls || !url->prefix.empty()) {
    return invalid(where + "the push URL '" + push.url +
                   "' is not https://HOST[:PORT] (kubernetes.push_url)" +
                   (url ? "" : ": " + url.error().message));
  }
  if (push.credential.empty()) return invalid(where + "the push credential is empty");
  if (push.ca_pem.find('\0') != std::string::npos || first_invalid_utf8(push.ca_pem)) {
    return invalid(where + "the push CA is not PEM text (a NUL byte or invalid UTF-8)");
  }
  return Ok{};
}

Json agent_command(const LaunchRequest& r, const ClusterSpec& cluster,
                   const std::string& rendezvous, const std::vector<std::string>& job_argv) {
  std::vector<std::string> words = {std::string(kAgentPath),
                                    "run",
                                    "--events",
                                    std::string(kAgentEventsPath),
                                    "--heartbeat-s",
                                    flag_number(r.heartbeat_s),
                                    "--hang-after-s",
                                    flag_number(r.hang_after_s)};
  // The live watch (issue 43) and the save bound, as on Slurm.
  for (auto& word : live_watch_flags(cluster.live_watch)) words.push_back(std::move(word));
  if (r.io_stall_after_s > 0) {
    words.push_back("--io-stall-after-s");
    words.push_back(flag_number(r.io_stall_after_s));
  }
  Json command = Json::array();
  for (const auto& word : words) command.push_back(escape_kube_references(word));
  // The task's place: a gang's pod takes its rank from the completion index (the env entry the
  // downward API fills, expanded by the kubelet); a pod alone is rank 0 at its own loopback.
  command.push_back("--node-rank");
  command.push_back(rendezvous.empty() ? std::string("0") : std::string("$(ORCH_NODE_RANK)"));
  const std::vector<std::string> place = {
      "--nnodes",
      std::to_string(r.nodes),
      "--tasks-per-node",
      "1",
      "--local-rank",
      "0",
      "--master-addr",
      rendezvous.empty() ? std::string("127.0.0.1") : rendezvous,
      "--master-port",
      std::to_string(master_port_for(r.token)),
      "--"};
  for (const auto& word : place) command.push_back(escape_kube_references(word));
  for (const auto& word : job_argv) command.push_back(escape_kube_references(word));
  return command;
}

Result<void> add_agent(const KubernetesSpec& k, Json& container, Json& pod_spec) {
  const std::string volume(kAgentVolume);
  const std::string mount(kAgentMountPath);
  if (pod_spec.contains("volumes")) {
    for (const Json& v : pod_spec["volumes"]) {
      if (v.value("name", "") == volume) {
        return invalid("the volume name " + volume +
                       " is the agent's (kubernetes.agent_image): name the volume otherwise");
      }
    }
  }
  if (container.contains("volumeMounts")) {
    for (const Json& m : container["volumeMounts"]) {
      if (m.value("mountPath", "") == mount) {
        return invalid("the mount path " + mount +
                       " is the agent's (kubernetes.agent_image): mount the volume elsewhere");
      }
    }
  }
  const Json volume_mount = {{"name", volume}, {"mountPath", mount}};
  pod_spec["volumes"].push_back(Json{{"name", volume}, {"emptyDir", Json::object()}});
  container["volumeMounts"].push_back(volume_mount);
  Json init = {
      {"name", std::string(kAgentInitContainer)},
      {"image", k.agent_image},
      {"command", Json::array({std::string(kAgentInImage), "install", std::string(kAgentPath)})},
      {"volumeMounts", Json::array({volume_mount})},
  };
  pod_spec["initContainers"] = Json::array({std::move(init)});
  return Ok{};
}

void add_agent_env(const PushLaunch* push, const std::string& secret_name, Json& env,
                   std::map<std::string, std::string>& secret_values) {
  // The node the agent's records name, as the scheduler knows it.
  set_entry(env, Json{{"name", "ORCH_NODE_NAME"},
                      {"valueFrom",
                       {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "spec.nodeName"}}}}}});
  if (push == nullptr) return;
  set_entry(env, Json{{"name", "ORCH_PUSH_URL"}, {"value", escape_kube_references(push->url)}});
  set_entry(env, Json{{"name", "ORCH_PUSH_CA"}, {"value", escape_kube_references(push->ca_pem)}});
  const std::string key(kPushCredentialKey);
  set_entry(env, Json{{"name", key},
                      {"valueFrom", {{"secretKeyRef", {{"name", secret_name}, {"key", key}}}}}});
  secret_values[key] = push->credential;
}

}  // namespace orch::kube
