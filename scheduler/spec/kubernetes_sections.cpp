// The kubernetes provider's section of a cluster entry: the kubeconfig, context and namespace
// to reach the API server with, and what pods run.
#include <string>
#include <string_view>

#include "scheduler/common/dns_name.h"
#include "scheduler/common/http_url.h"
#include "scheduler/spec/pod_settings_section.h"
#include "scheduler/spec/provider_sections.h"

namespace orch {
namespace {

using yaml::MapView;

// A Kubernetes namespace is a DNS-1123 label, or the API server refuses every request.
constexpr yaml::StringRule kDnsLabel{is_dns_label,
                                     "a DNS-1123 label: 1 to 63 of a-z, 0-9 and \"-\", "
                                     "starting and ending with a letter or digit"};

// An image reference: no blanks or control characters (the API server takes the rest).
bool is_image(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  }
  return true;
}
constexpr yaml::StringRule kImage{is_image, "an image reference without blanks"};

// Where agents push their records: https, a host and maybe a port, nothing after it.
bool is_push_url(std::string_view s) {
  if (s.empty()) return true;  // no pushing
  auto url = parse_server_url(std::string(s));
  return url && url->tls && url->prefix.empty() && s.find('?') == std::string_view::npos &&
         s.find('#') == std::string_view::npos;
}
constexpr yaml::StringRule kPushUrl{
    is_push_url,
    "https://HOST[:PORT] with nothing after it (no path, query or fragment): the agent adds "
    "/api/v1/attempts/..."};

}  // namespace

void read_kubernetes_sections(const MapView& entry, ClusterSpec& c) {
  std::vector<std::string_view> keys = {
      "kubeconfig",          "context",        "namespace",       "gpu_resource",
      "termination_grace_s", "gang_timeout_s", "allow_host_path", "queue",
      "helper_image",        "agent",          "agent_image",     "push_url"};
  for (auto key : pod_setting_keys()) keys.push_back(key);
  MapView k = entry.child("kubernetes", "kubernetes", std::move(keys),
                          "a map such as {kubeconfig: ~/.kube/config, context: gpu-cloud, "
                          "image: nvcr.io/nvidia/pytorch:24.05-py3}");
  KubernetesSpec& s = c.kubernetes;
  k.read_string("kubeconfig", s.kubeconfig, yaml::kNonEmpty, "a kubeconfig file");
  k.read_string("context", s.context, yaml::kNonEmpty, "a context of the kubeconfig");
  k.read_string("namespace", s.namespace_, kDnsLabel,
                "a namespace such as default (1 to 63 of a-z, 0-9 and \"-\")");
  read_pod_settings(k, s.pod);
  k.read_bool("allow_host_path", s.allow_host_path, "true or false");
  k.read_string("queue", s.queue, kDnsLabel, "a Kueue LocalQueue such as team-a");
  k.read_string("helper_image", s.helper_image, yaml::kNonEmpty, "a container image");
  k.read_string("agent", s.agent, yaml::kNonEmpty,
                "the path of orchestrate-agent in the helper image");
  k.read_string("gpu_resource", s.gpu_resource, yaml::kNonEmpty,
                "an extended resource such as nvidia.com/gpu");
  k.read_int("termination_grace_s", s.termination_grace_s, 0, 86400, "seconds such as 120");
  k.read_int("gang_timeout_s", s.gang_timeout_s, 1, 86400, "seconds such as 300");
  k.read_string("agent_image", s.agent_image, kImage,
                "the image of orchestrate-agent (agents/Dockerfile), or none for no agent");
  k.read_string("push_url", s.push_url, kPushUrl,
                "https://HOST[:PORT] of this server as the pods reach it, such as "
                "https://orch.example.com:8443");
  if (entry.reader().failed()) return;
  if (!entry.has("kubernetes")) {
    entry.reader().fail(
        entry.position(),
        "cluster \"" + c.name + "\" has provider kubernetes but no " + "\"kubernetes\" section",
        "kubernetes {kubeconfig, image} for a kubernetes cluster");
    return;
  }
  k.require("kubeconfig", "a kubeconfig file such as ~/.kube/config");
  k.require("image", "the container image jobs run in");
}

}  // namespace orch
