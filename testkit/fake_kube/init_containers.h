#pragma once
// Init containers, as the kubelet runs them: in order, each to completion, before the first
// container starts. Pure edits of a Pod's status in the kubelet's shapes:
// - while init container i runs: phase Pending, status.initContainerStatuses (the ones before
//   terminated Completed, i running, the rest waiting PodInitializing), the first container
//   waiting PodInitializing, Initialized False (ContainersNotInitialized, "containers with
//   incomplete status: [i ...]"), Ready and ContainersReady False (ContainersNotReady);
// - one that exits 0 is terminated Completed (ready true); the next starts on the next pass;
// - one that fails (restartPolicy Never: no retry) fails the pod: phase Failed, that init
//   container terminated (Error, its exit code; StartError when it could not start), the rest
//   waiting PodInitializing, Initialized still False; `kubectl get pods` shows Init:Error.

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "testkit/fake_kube/pod_status.h"

namespace orch::fake_kube {

// spec.initContainers ([] when none).
const nlohmann::json& init_containers(const nlohmann::json& pod);

// Init container `index` has started.
void mark_init_running(nlohmann::json& pod, std::size_t index, const std::string& started_at,
                       const std::string& container_id);

// Init container `index` has ended with `t`: Completed (exit 0) or the pod Failed.
void mark_init_finished(nlohmann::json& pod, std::size_t index, const Termination& t);

}  // namespace orch::fake_kube
