#pragma once
// Which clusters can run a job's `container:` (issue 40, item 4): those whose provider has a
// runtime for it (scheduler/model/container.h). The placement filter asks of one cluster; the
// brain asks at submit of all of them, so that a job no cluster can run is refused then, with
// the clusters that could run it named.

#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

// How the cluster runs containers: slurm.containers, local.containers, pod on Kubernetes.
ContainerRuntime container_runtime(const ClusterSpec& cluster);

// Why `cluster` cannot run the job's container; nullopt when it can or the job has none.
std::optional<std::string> container_refusal(const JobSpec& job, const ClusterSpec& cluster);

// At submit: the job has a container and none of the clusters it may run on (placement.allowed,
// else all) can run it. The error names the clusters that could (or says none can, and how a
// cluster declares a runtime); `where` is "container".
Result<void> check_container_clusters(const JobSpec& job, const std::vector<ClusterSpec>& clusters);

}  // namespace orch
