#include "scheduler/placement/job_shape_filter.h"

#include <algorithm>

#include "scheduler/spec/slurm_job_rules.h"

namespace orch {
namespace {

// "32 CPUs and 64G" / "32 CPUs" / "64G": what each node must give the job.
std::string need_text(int cpus, std::int64_t memory_mb) {
  std::string out;
  if (cpus > 0) out = std::to_string(cpus) + " CPUs";
  if (memory_mb > 0) out += (out.empty() ? "" : " and ") + memory_mib_text(memory_mb);
  return out;
}

}  // namespace

std::optional<std::string> JobShapeFilter::reject(const PlacementRequest& req,
                                                  const ClusterView& cluster) const {
  const JobSpec& job = *req.job;
  const ClusterSpec& c = *cluster.spec;
  if (c.provider == "slurm" && !job.slurm.empty()) {
    if (std::string why = slurm_options_refused(c.slurm, job.slurm); !why.empty()) return why;
  }
  const long long cpus = static_cast<long long>(job.cpus_per_task) * job.tasks_per_node;
  if ((cpus <= 0 && job.memory_mb <= 0) || cluster.node_sizes.empty()) return std::nullopt;
  // Nodes out of use are not counted (the capacity filter names them); a size the site does
  // not report is taken to fit.
  const auto unusable = unusable_nodes(req, cluster);
  int usable = 0, fit = 0, most_cpus = 0;
  std::int64_t most_memory = 0;
  for (const auto& n : cluster.node_sizes) {
    if (std::binary_search(unusable.begin(), unusable.end(), n.name)) continue;
    ++usable;
    most_cpus = std::max(most_cpus, n.cpus);
    most_memory = std::max(most_memory, n.memory_mb);
    const bool cpus_ok = cpus <= 0 || n.cpus == 0 || n.cpus >= cpus;
    const bool memory_ok = job.memory_mb <= 0 || n.memory_mb == 0 || n.memory_mb >= job.memory_mb;
    if (cpus_ok && memory_ok) ++fit;
  }
  if (fit >= job.nodes || usable == 0) return std::nullopt;
  return "job needs " + need_text(static_cast<int>(std::max(cpus, 0LL)), job.memory_mb) +
         " per node (cpus_per_task x tasks_per_node, memory) on " + std::to_string(job.nodes) +
         " node(s); " + std::to_string(fit) + " of " + std::to_string(usable) +
         " usable nodes have them (the largest: " + need_text(most_cpus, most_memory) + ")";
}

}  // namespace orch
