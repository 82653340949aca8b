#include "scheduler/spec/container_support.h"

#include <algorithm>

namespace orch {
namespace {

bool may_run_on(const JobSpec& job, const ClusterSpec& cluster) {
  const auto& allowed = job.allowed_clusters;
  return allowed.empty() ||
         std::find(allowed.begin(), allowed.end(), cluster.name) != allowed.end();
}

std::string names(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& n : list) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

ContainerRuntime container_runtime(const ClusterSpec& cluster) {
  if (cluster.provider == "slurm") return cluster.slurm.containers;
  if (cluster.provider == "local") return cluster.local.containers;
  if (cluster.provider == "kubernetes") return ContainerRuntime::pod;
  return ContainerRuntime::none;
}

std::optional<std::string> container_refusal(const JobSpec& job, const ClusterSpec& cluster) {
  if (job.container.empty()) return std::nullopt;
  switch (container_runtime(cluster)) {
    case ContainerRuntime::none:
      return "runs no containers (its " + cluster.provider + ".containers is none)";
    case ContainerRuntime::pod:
      if (!job.container.mounts.empty()) {
        return "a Kubernetes cluster takes no container.mounts (use the job's kubernetes.volumes)";
      }
      return std::nullopt;
    case ContainerRuntime::pyxis:
    case ContainerRuntime::apptainer:
      break;
  }
  return std::nullopt;
}

Result<void> check_container_clusters(const JobSpec& job,
                                      const std::vector<ClusterSpec>& clusters) {
  if (job.container.empty()) return Ok{};
  std::vector<std::string> could, could_elsewhere, why_not;
  for (const ClusterSpec& c : clusters) {
    const auto refusal = container_refusal(job, c);
    if (!refusal) (may_run_on(job, c) ? could : could_elsewhere).push_back(c.name);
    if (refusal && may_run_on(job, c)) why_not.push_back(c.name + " " + *refusal);
  }
  if (!could.empty()) return Ok{};
  std::string msg =
      "container: no cluster this job may run on can run its container (" + names(why_not) + ")";
  msg += could_elsewhere.empty()
             ? "; no configured cluster runs containers: an administrator declares "
               "slurm.containers: pyxis or apptainer (or local.containers: apptainer) in the "
               "clusters file"
             : "; clusters that could run it: " + names(could_elsewhere) +
                   " (name them in placement.allowed)";
  Error bad = make_error(ErrorKind::invalid, msg);
  bad.where = "container";
  return bad;
}

}  // namespace orch
