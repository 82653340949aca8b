// What a Kubernetes API server answers, as far as orchestrate reads it: every JSON parser of
// kube_status.h on the same bytes (a captured Pod, PodList, Job, NodeList, Status or watch line
// seeds them all), then the attempt mapping over whatever parsed. Malformed JSON or fields of
// the wrong type are ErrorKind::invalid Results; nothing may crash or throw.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "adapters/kubernetes/kube_status.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace kube = orch::kube;
  const std::string_view json(reinterpret_cast<const char*>(data), size);

  auto nodes = kube::parse_node_list(json);
  auto node = kube::parse_node(json);
  auto pods = kube::parse_pods(json);
  auto pod = kube::parse_pod(json);
  auto jobs = kube::parse_jobs(json);
  auto job = kube::parse_job(json);
  (void)kube::parse_watch_event(json);
  (void)kube::parse_list_resource_version(json);
  (void)kube::parse_api_status(json);
  (void)kube::parse_whole_quantity(json);

  std::vector<kube::KubeNode> all_nodes = nodes ? *nodes : std::vector<kube::KubeNode>{};
  if (node) all_nodes.push_back(*node);
  (void)kube::node_infos(all_nodes);

  std::vector<kube::PodInfo> all_pods = pods ? *pods : std::vector<kube::PodInfo>{};
  if (pod) all_pods.push_back(*pod);
  std::optional<kube::KubeJobInfo> the_job;
  if (job) {
    the_job = *job;
  } else if (jobs && !jobs->empty()) {
    the_job = jobs->front();
  }
  (void)kube::map_attempt(all_pods, the_job, &all_nodes);
  (void)kube::map_attempt(all_pods, std::nullopt, nullptr);
  return 0;
}
