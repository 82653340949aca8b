#include "adapters/slurm/container_words.h"

#include <vector>

#include "adapters/ssh/shell_quote.h"
#include "scheduler/model/container.h"

namespace orch::slurm {
namespace {

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos || slash == 0 ? std::string("/") : path.substr(0, slash);
}

// Where the agent, the run directory, the code and the checkpoints are: mounted at the same
// paths, so every path orchestrate hands the job means the same inside.
std::vector<std::string> orchestrate_dirs(const ClusterSpec& cluster, const std::string& agent) {
  return bind_dirs({parent_dir(agent), cluster.storage_root, cluster.checkpoint_root});
}

Result<std::string> quoted_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    auto q = shell_quote(w);
    if (!q) return make_error(ErrorKind::invalid, "container: " + q.error().message);
    out += " " + *q;
  }
  return out;
}

}  // namespace

Result<ContainerWords> container_words(const LaunchRequest& r, const ClusterSpec& cluster,
                                       const std::string& agent, const std::string& run_work_dir) {
  ContainerWords out;
  if (r.container.empty()) return out;
  const std::vector<std::string> bind = orchestrate_dirs(cluster, agent);
  const std::string& workdir = r.workdir.empty() ? run_work_dir : r.workdir;
  switch (cluster.slurm.containers) {
    case ContainerRuntime::pyxis: {
      auto words = quoted_words(pyxis_options(r.container, bind, workdir));
      if (!words) return words.error();
      out.srun_options = *words;
      return out;
    }
    case ContainerRuntime::apptainer: {
      auto words = quoted_words(apptainer_prefix(r.container, bind, workdir));
      if (!words) return words.error();
      out.exec_prefix = *words;
      return out;
    }
    case ContainerRuntime::none:
    case ContainerRuntime::pod:
      break;
  }
  return make_error(ErrorKind::invalid, "cluster " + cluster.name +
                                            " runs no containers (slurm.containers is none): "
                                            "job " +
                                            std::to_string(r.job_id) + " asks for image " +
                                            r.container.image);
}

}  // namespace orch::slurm
