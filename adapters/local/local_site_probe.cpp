// LocalSite::probe_nodes: `orchestrate-agent probe` once per virtual node of this machine.
//
// The probes run one after the other, never at once: every virtual node is the same machine,
// so concurrent probes would fight over the same CPUs and disk and each would measure the
// others. Each probe gets an equal share of the time left in the round (so one that hangs
// cannot starve the nodes after it) and is killed, with everything it started, at the end of
// its share; a node whose probe was killed or printed no probe line gets no result.

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <set>

#include "adapters/local/format_arg.h"
#include "adapters/local/local_site.h"
#include "adapters/process/run_captured.h"
#include "scheduler/common/text.h"

namespace orch {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kAgentUsage = 2;  // the agent's exit status for bad usage (agents/README.md)

}  // namespace

Result<std::vector<ProbeResult>> LocalSite::probe_nodes(const ProbeRequest& request) {
  std::lock_guard<std::mutex> round(probe_mutex_);
  if (auto up = check_up(); !up) return up.error();
  const std::vector<std::string> all = node_names();
  std::vector<std::string> nodes = request.nodes.empty() ? all : request.nodes;
  std::vector<std::string> unknown;
  for (const std::string& n : nodes) {
    if (std::find(all.begin(), all.end(), n) == all.end()) unknown.push_back(n);
  }
  if (!unknown.empty()) {
    std::string names;
    for (const std::string& n : unknown) names += (names.empty() ? "" : ", ") + n;
    std::string have;
    for (const std::string& n : all) have += (have.empty() ? "" : ", ") + n;
    return make_error(ErrorKind::invalid, "site " + options_.name + " has no node " + names +
                                              " to probe (its nodes: " + have + ")");
  }
  {  // a node named twice is probed once
    std::set<std::string> seen;
    std::erase_if(nodes, [&](const std::string& n) { return !seen.insert(n).second; });
  }
  if (request.io_bytes < 0 || !(request.compute_s >= 0) || !(request.timeout_s > 0)) {
    return make_error(ErrorKind::invalid, "probe " + request.token +
                                              ": io_bytes and compute_s must not be negative "
                                              "and timeout_s must be positive");
  }
  if (access(options_.agent_path.c_str(), X_OK) != 0) {
    return make_error(ErrorKind::invalid,
                      "site " + options_.name + ": the agent '" + options_.agent_path +
                          "' is not executable (" + local::errno_text(errno) +
                          "); build orchestrate-agent and point agent_path at it");
  }
  const std::string dir = request.dir.empty() ? options_.root + "/probe" : request.dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return make_error(ErrorKind::io, "cannot create probe directory " + dir + ": " + ec.message());

  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<std::int64_t>(request.timeout_s * 1e3));
  std::vector<ProbeResult> results;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string& node = nodes[i];
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto share = left / static_cast<long>(nodes.size() - i);
    if (share <= std::chrono::milliseconds(0)) break;  // the round's time is spent
    std::vector<std::string> argv = {options_.agent_path,
                                     "probe",
                                     "--node",
                                     node,
                                     "--dir",
                                     dir,
                                     "--io-bytes",
                                     std::to_string(request.io_bytes),
                                     "--compute-s",
                                     local::format_arg(request.compute_s)};
    for (std::string& word : gpu_probe_args(request.gpu)) argv.push_back(std::move(word));
    auto run = process::run_captured(argv, {.timeout = share});
    if (!run) return run.error();
    if (run->timed_out) continue;  // killed: no answer from this node
    auto parsed = parse_probe_output(run->out);
    if (!parsed) {
      // Our own agent printing something unreadable is a version mismatch or a bug, not a
      // property of the node: say so rather than failing the node.
      return make_error(ErrorKind::internal,
                        "site " + options_.name + ": the probe of " + node +
                            " printed a line that does not parse: " + parsed.error().message);
    }
    if (parsed->empty()) {
      // An agent that does not know `probe` (or these options) is older than this server.
      if (run->exit.exit_code == kAgentUsage) {
        return make_error(ErrorKind::internal, "site " + options_.name + ": the agent " +
                                                   options_.agent_path +
                                                   " refused the probe: " + first_line(run->err));
      }
      continue;  // it failed before printing its result (stderr says why)
    }
    ProbeResult r = std::move(parsed->front());
    r.node = node;  // the name this site knows it by, whatever the agent thought
    results.push_back(std::move(r));
  }
  // An outage that began during the round took the site away: answer as every call then does.
  if (auto up = check_up(); !up) return up.error();
  return results;
}

}  // namespace orch
