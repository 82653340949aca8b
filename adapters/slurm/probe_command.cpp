// The node probe's command lines and the reading of srun's output (see probe_command.h).

#include "adapters/slurm/probe_command.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "adapters/slurm/batch_script.h"
#include "adapters/slurm/parse_util.h"
#include "adapters/ssh/shell_quote.h"

namespace orch::slurm {
namespace {

Error invalid(std::string message) {
  return make_error(ErrorKind::invalid, std::move(message));
}

std::string trimmed_root(const std::string& root) {
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  return r == "/" ? "" : r;
}

}  // namespace

std::string remote_agent_path(const std::string& storage_root, const std::string& agent_id) {
  return trimmed_root(storage_root) + "/bin/orchestrate-agent-" + agent_id;
}

std::string default_probe_dir(const ClusterSpec& cluster) {
  if (!cluster.checkpoint_root.empty()) return cluster.checkpoint_root;
  return trimmed_root(cluster.storage_root) + "/probe";
}

ProbeTimes probe_times(double round_s) {
  ProbeTimes t;
  double margin = std::clamp(round_s * 0.1, 2.0, 15.0);
  // A round too short for the margin still gets a remote bound below the SSH deadline.
  if (margin > round_s / 2) margin = round_s / 2;
  t.remote_s = round_s - margin;
  t.kill_after_s = margin / 2;
  t.time_limit_min = std::max(1, static_cast<int>(std::ceil(t.remote_s / 60.0)));
  return t;
}

Result<std::vector<std::string>> probe_srun_argv(const ProbeJob& job, const SlurmSpec& slurm) {
  if (auto ok = check_token(job.token); !ok) return ok.error();
  if (job.nodes.empty()) return invalid("a probe round needs at least one node");
  if (auto ok = check_node_names(job.nodes, "srun --nodelist"); !ok) return ok.error();
  if (job.agent.empty() || job.agent[0] != '/') {
    return invalid("the agent's path on the cluster '" + job.agent + "' is not absolute");
  }
  if (job.dir.empty() || job.dir[0] != '/') {
    return invalid("the probe directory '" + job.dir +
                   "' is not an absolute path on the cluster's shared filesystem");
  }
  if (job.io_bytes < 0 || !(job.compute_s >= 0) || !(job.round_s > 0)) {
    return invalid("probe " + job.token +
                   ": io_bytes and compute_s must not be negative and the round's time must be "
                   "positive");
  }
  ProbeTimes t = probe_times(job.round_s);
  std::string nodelist;
  for (const auto& n : job.nodes) nodelist += (nodelist.empty() ? "" : ",") + n;
  std::vector<std::string> argv = {
      "timeout",
      "--kill-after=" + detail::shortest_number(t.kill_after_s),
      detail::shortest_number(t.remote_s),
      "srun",
      "--job-name=" + job.token,
      "--nodes=" + std::to_string(job.nodes.size()),
      "--ntasks-per-node=1",
      "--nodelist=" + nodelist,
      "--kill-on-bad-exit=0",
      "--chdir=" + job.dir,
  };
  if (job.gpus_per_node > 0) {
    argv.push_back("--gres=" + (slurm.gres.empty() ? std::string("gpu") : slurm.gres) + ":" +
                   std::to_string(job.gpus_per_node));
  }
  if (!slurm.partition.empty()) argv.push_back("--partition=" + slurm.partition);
  if (!slurm.account.empty()) argv.push_back("--account=" + slurm.account);
  if (!slurm.qos.empty()) argv.push_back("--qos=" + slurm.qos);
  argv.push_back("--time=" + std::to_string(t.time_limit_min));
  for (std::string word : {job.agent, std::string("probe"), std::string("--dir"), job.dir,
                           std::string("--io-bytes"), std::to_string(job.io_bytes),
                           std::string("--compute-s"), detail::shortest_number(job.compute_s)}) {
    argv.push_back(std::move(word));
  }
  for (std::string& word : gpu_probe_args(job.gpu)) argv.push_back(std::move(word));
  // Every word must survive the remote shell: a NUL byte anywhere is refused here, not later.
  if (auto command = shell_command(argv); !command) {
    return invalid("probe command: " + command.error().message);
  }
  return argv;
}

Result<std::string> probe_round_command(const ProbeJob& job, const SlurmSpec& slurm) {
  auto argv = probe_srun_argv(job, slurm);
  if (!argv) return argv.error();
  // The token passed check_token: letters, digits, '-', '_' and '.', so it may stand beside
  // the glob; the directory is quoted.
  const std::string stem = "/.orch-probe-" + job.token + "-";
  auto it = std::find(argv->begin(), argv->end(), std::string("--chdir=") + job.dir);
  std::string pattern;  // srun reads '%' in the name as a pattern: the directory's are literal
  for (char c : job.dir) pattern += c == '%' ? std::string("%%") : std::string(1, c);
  argv->insert(it == argv->end() ? it : it + 1, "--output=" + pattern + stem + "%t.out");
  auto srun = shell_command(*argv);
  auto dir = shell_quote(job.dir);
  if (!srun || !dir)
    return invalid("probe command: " + (!srun ? srun.error() : dir.error()).message);
  const std::string files = *dir + stem + "*.out";
  return *srun + "; rc=$?; for f in " + files +
         "; do [ -f \"$f\" ] && cat -- \"$f\" && echo; done; rm -f -- " + files + "; exit $rc";
}

Result<std::string> probe_prepare_command(const std::string& agent, const std::string& dir) {
  auto bin = agent.substr(0, agent.rfind('/'));
  auto mkdir = shell_command({"mkdir", "-p", "--", bin.empty() ? "/" : bin, dir});
  auto test = shell_command({"test", "-x", agent});
  auto stat = shell_command({"stat", "-c", "%s", "--", agent});
  if (!mkdir || !test || !stat) {
    return invalid("probe directories: " + (!mkdir  ? mkdir.error()
                                            : !test ? test.error()
                                                    : stat.error())
                                               .message);
  }
  return *mkdir + " && { " + *test + " && " + *stat + " || :; }";
}

std::optional<std::int64_t> parse_agent_size(std::string_view output) {
  std::string_view s = detail::trim(output);
  if (s.empty()) return std::nullopt;
  std::int64_t size = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), size);
  if (ec != std::errc() || end != s.data() + s.size() || size < 0) return std::nullopt;
  return size;
}

ProbeLines parse_probe_lines(std::string_view output, const std::vector<std::string>& nodes) {
  // One line at a time rather than parse_probe_output on the whole: a node whose line is
  // garbled (a task killed mid-write) must not cost the other nodes their results.
  ProbeLines lines;
  std::set<std::string> wanted(nodes.begin(), nodes.end());
  std::set<std::string> seen;
  for (std::string_view line : detail::non_blank_lines(output)) {
    std::string_view t = detail::trim(line);
    if (t.empty() || t.front() != '{') continue;
    auto r = parse_probe_result(t);
    if (!r) {
      lines.rejected.push_back(r.error().message);
      continue;
    }
    if (!wanted.count(r->node)) {
      lines.rejected.push_back("a result for node '" + r->node + "', which was not probed");
      continue;
    }
    if (!seen.insert(r->node).second) {
      lines.rejected.push_back("a second result for node " + r->node);
      continue;
    }
    lines.results.push_back(std::move(*r));
  }
  return lines;
}

}  // namespace orch::slurm
