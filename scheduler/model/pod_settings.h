#pragma once
// What a Kubernetes pod of an attempt is given besides its command (issue 20): the cluster's
// `kubernetes:` section sets them for every job, a job's own `kubernetes:` section adds to or
// overrides them (merge_pod_settings). Read by adapters/kubernetes/kube_manifest.h, which
// writes them into the pod spec. Validated where they are read (scheduler/spec).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "scheduler/common/result.h"

namespace orch {

// A volume mounted into the job's container: a PersistentVolumeClaim (shared by every pod that
// mounts it: checkpoints live there) or a directory of the node (hostPath, where the cluster
// allows it).
struct PodVolume {
  std::string name;       // a DNS-1123 label, unique in the pod
  std::string claim;      // persistentVolumeClaim.claimName, or
  std::string host_path;  // hostPath.path (absolute)
  std::string mount;      // mountPath in the container (absolute)
  bool read_only = false;
  bool operator==(const PodVolume&) const = default;
};

struct PodToleration {
  std::string key;
  std::string op = "Exists";  // Exists or Equal
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute or "" (all)
  bool operator==(const PodToleration&) const = default;
};

// The job container's securityContext, the subset RDMA and similar setups need (issue 44), and
// the pod's hostNetwork. Unset fields are left to the cluster's defaults.
struct PodSecurity {
  std::vector<std::string> capabilities_add;  // capabilities.add, e.g. IPC_LOCK, SYS_RESOURCE
  std::optional<bool> privileged;
  std::optional<std::int64_t> run_as_user;
  std::optional<std::int64_t> run_as_group;
  std::optional<bool> host_network;  // the pod's spec.hostNetwork
  bool empty() const {
    return capabilities_add.empty() && !privileged && !run_as_user && !run_as_group &&
           !host_network;
  }
  bool operator==(const PodSecurity&) const = default;
};

struct PodSettings {
  std::string image;
  std::vector<std::string> image_pull_secrets;
  std::string service_account;
  std::string shm_size;  // /dev/shm as a memory-backed emptyDir of this size ("64Gi"); "": none
  std::map<std::string, std::string> node_selector;
  std::vector<PodToleration> tolerations;
  std::map<std::string, std::string> extra_resources;  // limits per pod, e.g. rdma/ib: "1"
  std::string priority_class;
  std::vector<PodVolume> volumes;
  // The pods' metadata (issue 44): Kueue's topology annotations, a CNI's network annotations,
  // labels a policy selects on. Orchestrate's own labels and annotations win over these.
  std::map<std::string, std::string> annotations;
  std::map<std::string, std::string> labels;
  PodSecurity security;  // `security_context:` and `host_network:`
  bool operator==(const PodSettings&) const = default;
};

// The job's settings over the cluster's: image, service account, shm size and priority class
// where the job sets them; node selector and extra resources merged key by key (the job's
// value wins); pull secrets and tolerations added; volumes by name (the job's wins);
// annotations and labels key by key (the job's value wins); capabilities added, the other
// security fields the job's where it sets them.
PodSettings merge_pod_settings(const PodSettings& cluster, const PodSettings& job);

nlohmann::json pod_settings_to_json(const PodSettings& pod);
// ErrorKind::invalid when the JSON is not what pod_settings_to_json writes.
Result<PodSettings> pod_settings_from_json(const nlohmann::json& j);

}  // namespace orch
