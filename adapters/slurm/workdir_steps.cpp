#include "adapters/slurm/workdir_steps.h"

#include "adapters/ssh/shell_quote.h"
#include "scheduler/model/workdir.h"

namespace orch::slurm {

Result<std::string> workdir_script_lines(const LaunchRequest& r, const std::string& run_dir,
                                         const ContainerWords& image) {
  if (r.workdir.empty() && r.setup.empty()) return std::string();
  std::string out = "# The job's code and setup (issue 40): extracted once, set up once per key.\n";
  for (const auto& [name, value] : workdir_env(r, run_dir + "/" + std::string(kSetupFailedFile))) {
    auto q = shell_quote(value);
    if (!q) return make_error(ErrorKind::invalid, name + ": " + q.error().message);
    out += "export " + name + "=" + *q + "\n";
  }
  if (!r.workdir.empty()) out += code_extract_snippet();
  if (!r.setup.empty()) {
    auto script = shell_quote(setup_snippet(r.setup_per_node));
    if (!script) return make_error(ErrorKind::invalid, "setup: " + script.error().message);
    const std::string shape = r.setup_per_node
                                  ? "--nodes=" + std::to_string(r.nodes) + " --ntasks-per-node=1"
                                  : std::string("--nodes=1 --ntasks=1");
    out += "srun " + shape + image.srun_options + " --kill-on-bad-exit=1" + image.exec_prefix +
           " /bin/sh -c " + *script + " || exit $?\n";
    out += "unset ORCH_SETUP_COMMAND\n";
  }
  return out;
}

Result<std::string> srun_chdir_option(const LaunchRequest& r) {
  if (r.workdir.empty()) return std::string();
  auto q = shell_quote("--chdir=" + r.workdir);
  if (!q) return make_error(ErrorKind::invalid, "workdir: " + q.error().message);
  return " " + *q;
}

}  // namespace orch::slurm
