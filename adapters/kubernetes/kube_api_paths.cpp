// The API paths and names of a Kubernetes site's objects (kube_manifest.h declares them): where
// Jobs, Services, pods and their logs live in a namespace, the label selector of an attempt,
// and where a failed setup leaves its marker on the site's storage.
#include <string>

#include "adapters/kubernetes/kube_manifest.h"
#include "scheduler/model/workdir.h"

namespace orch::kube {

std::string setup_failed_marker(const ClusterSpec& cluster, const std::string& token) {
  return setup_root(cluster.storage_root) + "/failed." + token;
}

std::string token_label_selector(const std::string& token) {
  return std::string(kTokenLabel) + "=" + token;
}

std::string jobs_path(const std::string& namespace_) {
  return "/apis/batch/v1/namespaces/" + namespace_ + "/jobs";
}

std::string service_name_for(const std::string& job_name) {
  // A Service name is a DNS-1035 label: it must start with a letter.
  if (!job_name.empty() && job_name[0] >= 'a' && job_name[0] <= 'z') return job_name;
  return "orch-" + job_name;
}

std::string services_path(const std::string& namespace_) {
  return "/api/v1/namespaces/" + namespace_ + "/services";
}

std::string pods_path(const std::string& namespace_) {
  return "/api/v1/namespaces/" + namespace_ + "/pods";
}

std::string pod_log_path(const std::string& namespace_, const std::string& pod) {
  return pods_path(namespace_) + "/" + pod + "/log";
}

std::string nodes_path() {
  return "/api/v1/nodes";
}

std::string delete_background_body() {
  return R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})";
}

}  // namespace orch::kube
