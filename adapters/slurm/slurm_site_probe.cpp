// SlurmSite::probe_nodes: ship the agent, then one srun job with one probe task per node (the
// commands are in probe_command.h). A node whose task printed no usable line is simply absent
// from the answer: the caller treats it as failed.

#include <algorithm>
#include <chrono>
#include <set>

#include "adapters/slurm/batch_script.h"
#include "adapters/slurm/probe_command.h"
#include "adapters/slurm/slurm_site.h"
#include "adapters/ssh/shell_quote.h"
#include "scheduler/common/text.h"

namespace orch {
namespace {

constexpr int kTimeoutExpired = 124;  // timeout(1): the command ran past its time
constexpr int kTimeoutKilled = 137;   // timeout(1) --kill-after: it had to SIGKILL it

// The last few non-blank lines of srun's stderr: the reason is at the end, after the progress
// lines ("srun: job 12 queued and waiting for resources").
std::string tail_lines(const std::string& text, std::size_t count = 3) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) lines.push_back(line.size() > 300 ? line.substr(0, 300) + "..." : line);
    start = end + 1;
  }
  std::string out;
  std::size_t first = lines.size() > count ? lines.size() - count : 0;
  for (std::size_t i = first; i < lines.size(); ++i) out += (out.empty() ? "" : " | ") + lines[i];
  return out;
}

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0));
}

}  // namespace

Result<std::shared_ptr<const slurm::AgentBinary>> SlurmSite::local_agent() {
  std::lock_guard<std::mutex> lock(agent_mu_);
  if (agent_ && slurm::agent_unchanged(*agent_)) return agent_;
  auto read = slurm::read_agent_binary(options_.agent_path);
  if (!read) {
    return make_error(read.error().kind, "site " + spec_.name + ": " + read.error().message);
  }
  agent_ = std::make_shared<const slurm::AgentBinary>(std::move(*read));
  return agent_;
}

Result<std::string> SlurmSite::ship_agent(const std::string& probe_dir) {
  auto agent = local_agent();
  if (!agent) return agent.error();
  const std::string remote = slurm::remote_agent_path(spec_.storage_root, (*agent)->id);
  auto prepare = slurm::probe_prepare_command(remote, probe_dir);
  if (!prepare) return prepare.error();
  auto checked = ssh_->exec(*prepare);
  if (!checked) return checked.error();
  if (checked->exit_status != 0) {
    return make_error(ErrorKind::io,
                      "site " + spec_.name + ": cannot create " + probe_dir +
                          " and the agent's directory: " +
                          tail_lines(checked->err.empty() ? checked->out : checked->err));
  }
  // The name holds the content's hash, so the right size means the right file; the upload
  // itself is atomic (a temporary file, then a rename), so a half-written agent never runs.
  auto size = slurm::parse_agent_size(checked->out);
  if (size && static_cast<std::size_t>(*size) == (*agent)->content.size()) return remote;
  if (auto up = ssh_->upload(remote, (*agent)->content, 0755); !up) return up.error();
  return remote;
}

Result<SlurmSite::ProbeTargets> SlurmSite::probe_targets(const ProbeRequest& request) {
  auto listed = run(slurm::node_list_argv());
  if (!listed) return listed.error();
  auto records = slurm::parse_node_list(listed->out);
  if (!records) {
    return make_error(ErrorKind::io,
                      "site " + spec_.name + ": unexpected node list: " + records.error().message);
  }
  std::vector<std::string> wanted = request.nodes;
  if (wanted.empty()) {
    for (const auto& r : *records) wanted.push_back(r.name);
  }
  std::vector<std::string> unknown;
  std::vector<std::string> down;
  std::set<std::string> seen;
  ProbeTargets targets;
  for (const std::string& name : wanted) {
    if (!seen.insert(name).second) continue;
    auto it = std::find_if(records->begin(), records->end(),
                           [&](const slurm::NodeRecord& r) { return r.name == name; });
    if (it == records->end()) {
      unknown.push_back(name);
    } else if (!it->healthy) {
      // Not probed: a node Slurm holds down or drained would keep the whole job pending. It has
      // no result, which the caller reads as a failed probe.
      down.push_back(name + " (" + it->state + (it->reason.empty() ? "" : ": " + it->reason) + ")");
    } else {
      targets.gpus_per_node =
          targets.nodes.empty() ? it->gpus : std::min(targets.gpus_per_node, it->gpus);
      targets.nodes.push_back(name);
    }
  }
  if (!unknown.empty()) {
    return make_error(ErrorKind::invalid,
                      "site " + spec_.name + " has no node " + join(unknown) + " to probe");
  }
  if (targets.nodes.empty()) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": no node to probe is up" +
                                         (down.empty() ? "" : ": " + join(down)));
  }
  return targets;
}

Result<std::vector<ProbeResult>> SlurmSite::probe_nodes(const ProbeRequest& request) {
  std::lock_guard<std::mutex> round(probe_mu_);
  if (auto ok = slurm::check_token(request.token); !ok) return ok.error();
  auto targets = probe_targets(request);
  if (!targets) return targets.error();
  const std::string dir = request.dir.empty() ? slurm::default_probe_dir(spec_) : request.dir;
  auto agent = ship_agent(dir);
  if (!agent) return agent.error();

  slurm::ProbeJob job;
  job.token = request.token;
  job.nodes = targets->nodes;
  job.agent = *agent;
  job.dir = dir;
  job.io_bytes = request.io_bytes;
  job.compute_s = request.compute_s;
  job.round_s = request.timeout_s;
  job.gpus_per_node = targets->gpus_per_node;
  job.gpu = request.gpu;
  auto command = slurm::probe_round_command(job, spec_.slurm);
  if (!command) return command.error();
  auto ran = ssh_->exec(*command, to_ms(request.timeout_s));
  if (!ran) {
    // The connection is gone, and srun may still hold (or wait for) nodes: the remote
    // `timeout` ends it; a cancel by name now is a courtesy that usually cannot get through.
    (void)run({"scancel", "--name=" + request.token}, true);
    return ran.error();
  }
  slurm::ProbeLines lines = slurm::parse_probe_lines(ran->out, targets->nodes);
  // Tasks that answered count even when others failed or the round ran out of time.
  if (!lines.results.empty()) return std::move(lines.results);

  if (ran->exit_status != 0 && slurm::is_controller_unreachable(ran->err)) {
    return make_error(ErrorKind::unreachable,
                      "site " + spec_.name +
                          ": srun: the Slurm controller does not answer: " + tail_lines(ran->err));
  }
  std::string what = "site " + spec_.name + ": the probe of " + join(targets->nodes);
  if (ran->exit_status == kTimeoutExpired || ran->exit_status == kTimeoutKilled) {
    // Pending for want of nodes, or hung: whatever srun left behind goes.
    (void)run({"scancel", "--name=" + request.token}, true);
    return make_error(ErrorKind::io, what + " did not finish within " +
                                         std::to_string(static_cast<int>(request.timeout_s)) +
                                         " s: " + tail_lines(ran->err));
  }
  if (ran->exit_status != 0) {
    // srun refusing the request outright (a node list it will not take) is a bad request; any
    // other failure of the job is the site's.
    bool refused = ran->err.find("Unable to allocate resources") != std::string::npos ||
                   ran->err.find("Invalid") != std::string::npos;
    return make_error(refused ? ErrorKind::invalid : ErrorKind::io,
                      what + " failed (srun exit " + std::to_string(ran->exit_status) +
                          "): " + tail_lines(ran->err));
  }
  return make_error(ErrorKind::io, what + " printed no probe result" +
                                       (lines.rejected.empty() ? ": " + tail_lines(ran->err)
                                                               : ": " + lines.rejected.front()));
}

}  // namespace orch
