#pragma once
// The pod settings of a `kubernetes:` section (scheduler/model/pod_settings.h), read the same
// way in a cluster entry and in a job file (docs/kubernetes.md):
//
//   image, image_pull_secrets: [names], service_account, shm_size: 64Gi,
//   node_selector: {label: value}, tolerations: [{key, operator, value, effect}],
//   extra_resources: {rdma/ib: 1}, priority_class,
//   volumes: [{name, claim | host_path, mount, read_only}],
//   annotations: {key: value}, labels: {key: value}, host_network: true,
//   security_context: {capabilities: {add: [IPC_LOCK]}, privileged, run_as_user, run_as_group}

#include <string_view>
#include <vector>

#include "scheduler/model/pod_settings.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// The keys read_pod_settings reads, for a section's list of valid keys.
std::vector<std::string_view> pod_setting_keys();

// Reads them from `section` into `out`, recording the first bad value in the section's reader.
void read_pod_settings(yaml::MapView& section, PodSettings& out);

// Whether s is a label (or annotation) key: [prefix/]name, the prefix a DNS subdomain, the name
// 1 to 63 of [A-Za-z0-9._-] starting and ending alphanumeric.
bool is_label_key(std::string_view s);

// Whether s is a Kubernetes quantity such as 64Gi, 500M, 1, 0.5 (digits, an optional fraction,
// an optional binary or decimal suffix).
bool is_kube_quantity(std::string_view s);

}  // namespace orch
