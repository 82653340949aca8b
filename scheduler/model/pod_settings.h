#pragma once
// What a Kubernetes pod of an attempt is given besides its command (issue 20): the cluster's
// `kubernetes:` section sets them for every job, a job's own `kubernetes:` section adds to or
// overrides them (merge_pod_settings). Read by adapters/kubernetes/kube_manifest.h, which
// writes them into the pod spec. Validated where they are read (scheduler/spec).

#include <map>
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
  bool operator==(const PodSettings&) const = default;
};

// The job's settings over the cluster's: image, service account, shm size and priority class
// where the job sets them; node selector and extra resources merged key by key (the job's
// value wins); pull secrets and tolerations added; volumes by name (the job's wins).
PodSettings merge_pod_settings(const PodSettings& cluster, const PodSettings& job);

nlohmann::json pod_settings_to_json(const PodSettings& pod);
// ErrorKind::invalid when the JSON is not what pod_settings_to_json writes.
Result<PodSettings> pod_settings_from_json(const nlohmann::json& j);

}  // namespace orch
