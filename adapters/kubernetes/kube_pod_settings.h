#pragma once
// PodSettings (scheduler/model/pod_settings.h) written into a pod spec: the job's pods
// (kube_manifest.h) and the helper pods that list checkpoints and run probes
// (kube_helper_pod.h) share this one writer. Pure.

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"
#include "scheduler/model/pod_settings.h"
#include "scheduler/model/topology_hint.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch::kube {

// The volume the shared memory is mounted from (a memory-backed emptyDir at /dev/shm).
inline constexpr const char* kShmVolume = "orch-shm";

// What parts of the settings a pod takes: a job's pod takes all; a helper pod only what it
// needs to start and to see the volumes (no shm, extra resources or priority class).
enum class PodKind { job, helper };

// Asks for `gpus` of `gpu_resource` (container limits) and tolerates the taint GKE puts on GPU
// nodes, <gpu_resource>=present:NoSchedule (exactly that, not an operator's
// nvidia.com/gpu=broken). Nothing for 0 GPUs.
void request_gpus(const std::string& gpu_resource, int gpus, nlohmann::ordered_json& container,
                  nlohmann::ordered_json& pod_spec);

// Adds to `container` (volumeMounts, resources.limits, securityContext) and `pod_spec` (volumes,
// imagePullSecrets, serviceAccountName, nodeSelector, tolerations, priorityClassName,
// hostNetwork with dnsPolicy ClusterFirstWithHostNet, so Services still resolve) what
// `pod` asks for; container["image"] is set from pod.image. Tolerations are appended to any
// the pod spec has. ErrorKind::invalid when a volume is named kShmVolume.
Result<void> apply_pod_settings(const PodSettings& pod, PodKind kind,
                                nlohmann::ordered_json& container,
                                nlohmann::ordered_json& pod_spec);

// A job's own `privileged: true` or `host_network: true` gives its pods the node: refused
// (ErrorKind::invalid, naming the cluster and the setting) unless the cluster's own settings
// grant the same, so that whoever may submit jobs cannot take more than the cluster's owner gave.
Result<void> check_job_security(const PodSettings& job, const ClusterSpec& cluster);

// Adds the settings' labels and annotations to a pod template's `metadata` (keys already there,
// orchestrate's own, win), and the topology hint's level as Kueue's
// kueue.x-k8s.io/podset-required-topology (required) or podset-preferred-topology annotation.
void apply_pod_metadata(const PodSettings& pod, const TopologyHint& topology,
                        nlohmann::ordered_json& metadata);

}  // namespace orch::kube
