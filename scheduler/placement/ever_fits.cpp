#include "scheduler/placement/ever_fits.h"

#include <algorithm>
#include <cctype>

#include "scheduler/model/job_shape.h"
#include "scheduler/spec/container_support.h"
#include "scheduler/spec/slurm_job_rules.h"

namespace orch {
namespace {

// "H100"; a local site's slots are "slots".
std::string accelerator_text(const std::string& key) {
  if (key == "cpu-slot") return "slots";
  std::string out = key;
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

bool asks_node_size(const JobSpec& job) {
  return job.memory_mb > 0 || (job.cpus_per_task > 0 && job.tasks_per_node > 0);
}

// Of the cluster's nodes, how many could give the job its CPUs and memory per node: a node
// the site reported no size for (or not at all yet) is counted as one that could.
int nodes_that_could(const JobSpec& job, const ClusterView& cluster) {
  const long long cpus = static_cast<long long>(job.cpus_per_task) * job.tasks_per_node;
  const int reported = static_cast<int>(cluster.node_sizes.size());
  int fit = std::max(0, cluster.spec->nodes - reported);
  for (const auto& n : cluster.node_sizes) {
    const bool cpus_ok = cpus <= 0 || n.cpus == 0 || n.cpus >= cpus;
    const bool memory_ok = job.memory_mb <= 0 || n.memory_mb == 0 || n.memory_mb >= job.memory_mb;
    if (cpus_ok && memory_ok) ++fit;
  }
  return fit;
}

}  // namespace

std::string largest_shape(const ClusterView& cluster, const JobSpec& job) {
  const ClusterSpec& c = *cluster.spec;
  std::string out = std::to_string(c.nodes) + " node" + (c.nodes == 1 ? "" : "s") + " x " +
                    std::to_string(c.gpus_per_node) + " " + accelerator_text(c.accelerator);
  int most_cpus = 0;
  std::int64_t most_memory = 0;
  for (const auto& n : cluster.node_sizes) {
    most_cpus = std::max(most_cpus, n.cpus);
    most_memory = std::max(most_memory, n.memory_mb);
  }
  std::string size;
  if (most_memory > 0) size = memory_mib_text(most_memory);
  if (most_cpus > 0) size += (size.empty() ? "" : " and ") + std::to_string(most_cpus) + " CPUs";
  if (!size.empty()) {
    out += ", " + size + " per node";
  } else if (asks_node_size(job)) {
    out += " (node sizes not reported yet)";
  }
  return out;
}

std::optional<std::string> never_holds(const JobSpec& job, const ClusterView& cluster) {
  const ClusterSpec& c = *cluster.spec;
  const auto& allowed = job.allowed_clusters;
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), c.name) == allowed.end()) {
    return "not in placement.allowed";
  }
  if (cluster.admission == Admission::retired) return "retired";
  if (job.gpus_per_node > c.gpus_per_node || job.nodes > c.nodes) return "too small";
  if (asks_node_size(job) && nodes_that_could(job, cluster) < job.nodes) {
    return "fewer than " + std::to_string(job.nodes) + " node(s) with the job's CPUs and memory";
  }
  if (auto refused = container_refusal(job, c)) return *refused;
  if (c.provider == "slurm" && !job.slurm.empty()) {
    if (std::string why = slurm_options_refused(c.slurm, job.slurm); !why.empty()) return why;
  }
  return std::nullopt;
}

std::optional<std::string> fits_no_cluster(const JobSpec& job,
                                           const std::vector<ClusterView>& clusters) {
  std::string offers;
  for (const auto& v : clusters) {
    const auto why = never_holds(job, v);
    if (!why) return std::nullopt;
    offers +=
        offers.empty() ? v.spec->name + " offers at most " : "; " + v.spec->name + " at most ";
    offers += largest_shape(v, job);
    if (*why != "too small") offers += " (" + *why + ")";
  }
  std::string need = std::to_string(job.nodes) + " node" + (job.nodes == 1 ? "" : "s") + " x " +
                     std::to_string(job.gpus_per_node) + " GPUs";
  if (job.memory_mb > 0) need += ", " + memory_mib_text(job.memory_mb) + " per node";
  std::string out = "no configured cluster can ever hold this job (" + need + ")";
  return offers.empty() ? out + ": no cluster is configured" : out + ": " + offers;
}

}  // namespace orch
