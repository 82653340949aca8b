#pragma once
// What the fake's "container runtime" runs for a container of a pod (an init container or the
// first container): its command + args, with
// the container's env (value, and valueFrom.fieldRef for metadata.name/namespace/uid,
// metadata.labels['k'], metadata.annotations['k'], spec.nodeName, spec.serviceAccountName,
// status.podIP/hostIP; valueFrom.secretKeyRef) after a few variables a real pod also has (HOSTNAME,
// KUBERNETES_SERVICE_HOST/PORT), and $(VAR) references in command and args expanded the way the
// kubelet does. The image map (image_map.h) says which local program an image's command is;
// the paths of the pod's own emptyDirs are rewritten to its directory (pod_volumes.h).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "testkit/fake_kube/image_map.h"
#include "testkit/fake_kube/pod_process.h"
#include "testkit/fake_kube/pod_volumes.h"

namespace orch::fake_kube {

struct ContainerLaunch {
  ProcessSpec process;
  std::string error;  // "executable file not found in $PATH"-style, when it cannot start
  // Why the container cannot be made yet ("secret \"x\" not found"): the kubelet's
  // CreateContainerConfigError, after which it tries again.
  std::string config_error;
  // The container's emptyDir mount paths and the pod's directories for them (pod_volumes.h),
  // for commands exec'd in the pod.
  MountRewrites private_mounts;
};

// The Secret of that name in the pod's namespace, nullopt when there is none.
using SecretLookup = std::function<std::optional<nlohmann::json>(const std::string& name)>;

// pod_dir: the pod's directory (working directory unless the container's workingDir exists,
// and where the log goes). api_port: for KUBERNETES_SERVICE_PORT. secrets: for
// valueFrom.secretKeyRef (secrets.h), whose values are not $(VAR)-expanded, as in Kubernetes.
// images: the image map (nullptr: none).
ContainerLaunch container_launch(const nlohmann::json& pod, const nlohmann::json& container,
                                 const std::string& pod_dir, const std::string& log_path,
                                 int api_port, const SecretLookup& secrets,
                                 const ImageMap* images = nullptr);

// The pod's first container ({} when it has none).
nlohmann::json first_container(const nlohmann::json& pod);

// "$(A)-$(B)" with A, B from env; "$$(A)" stays "$(A)"; unknown references stay as written.
std::string expand_references(const std::string& text,
                              const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace orch::fake_kube
