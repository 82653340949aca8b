// KubernetesSite::probe_nodes: one probe pod per node (kube_helper_pod.h), pinned by node
// affinity, each running `<agent> probe` to its end; a node's result is the last JSON line of
// its pod's log. A node whose pod did not succeed in time, or printed no usable line, is absent
// from the answer: the caller treats it as failed.

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "adapters/kubernetes/kube_helper_pod.h"
#include "adapters/kubernetes/kube_manifest.h"
#include "adapters/kubernetes/kube_site.h"
#include "scheduler/common/percent_encoding.h"
#include "scheduler/common/text.h"
#include "scheduler/model/probe_result.h"

namespace orch {
namespace {

// The last line of a log that reads as a probe result for `node`.
std::optional<ProbeResult> result_in(std::string_view log, const std::string& node) {
  std::optional<ProbeResult> found;
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.empty() && line.front() == '{') {
      auto r = parse_probe_result(line);
      if (r && r->node == node) found = std::move(*r);
    }
    start = end + 1;
  }
  return found;
}

}  // namespace

Result<std::vector<ProbeResult>> KubernetesSite::probe_nodes(const ProbeRequest& request) {
  std::lock_guard<std::mutex> round(probe_mu_);
  auto listed = call("GET", kube::nodes_path(), "", {});
  if (!listed) return listed.error();
  auto nodes = kube::parse_node_list(listed->body, spec_.kubernetes.gpu_resource);
  if (!nodes) return site_error(nodes.error());
  std::vector<std::string> wanted = request.nodes;
  if (wanted.empty()) {
    for (const auto& n : *nodes) wanted.push_back(n.info.name);
  }
  std::vector<std::string> targets;
  std::vector<std::string> unknown;
  std::vector<std::string> down;
  int gpus = -1;
  std::set<std::string> seen;
  for (const auto& name : wanted) {
    if (!seen.insert(name).second) continue;
    auto it = std::find_if(nodes->begin(), nodes->end(),
                           [&](const kube::KubeNode& n) { return n.info.name == name; });
    if (it == nodes->end()) {
      unknown.push_back(name);
    } else if (!it->info.healthy) {
      // Not probed: its pod could not be scheduled. No result reads as a failed probe.
      down.push_back(name + " (" + it->info.reason + ")");
    } else {
      targets.push_back(name);
      gpus = gpus < 0 ? it->info.gpus : std::min(gpus, it->info.gpus);
    }
  }
  if (!unknown.empty()) {
    return make_error(ErrorKind::invalid,
                      "site " + spec_.name + " has no node " + join(unknown) + " to probe");
  }
  if (targets.empty()) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": no node to probe is up" +
                                         (down.empty() ? "" : ": " + join(down)));
  }
  const std::string dir = !request.dir.empty()             ? request.dir
                          : !spec_.checkpoint_root.empty() ? spec_.checkpoint_root
                                                           : std::string("/tmp");
  auto pods = kube::probe_pods(spec_, namespace_, request, targets, dir, std::max(gpus, 0));
  if (!pods) return site_error(pods.error());
  const std::string selector = percent_encode(std::string(kube::kTokenLabel) + "=" + request.token +
                                              "," + std::string(kube::kHelperLabel) + "=probe");
  const auto clean_up = [&] {
    for (const auto& p : *pods) {
      (void)client_->request("DELETE",
                             kube::pods_path(namespace_) + "/" + p.name + "?gracePeriodSeconds=0");
    }
  };
  for (const auto& p : *pods) {
    if (auto made = call("POST", kube::pods_path(namespace_), p.body, {409}); !made) {
      clean_up();
      return made.error();
    }
  }
  // Until every pod has ended or the round's time is up.
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<std::int64_t>(request.timeout_s * 1e3));
  std::vector<kube::PodInfo> last;
  for (;;) {
    auto r = call("GET", kube::pods_path(namespace_) + "?labelSelector=" + selector, "", {});
    if (r) {
      auto parsed = kube::parse_pods(r->body);
      if (parsed) last = std::move(*parsed);
    }
    const bool all_done = last.size() >= pods->size() &&
                          std::all_of(last.begin(), last.end(), [](const kube::PodInfo& p) {
                            return p.phase == "Succeeded" || p.phase == "Failed";
                          });
    if (all_done || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  std::vector<ProbeResult> results;
  std::vector<std::string> failures;
  for (const auto& p : *pods) {
    auto it = std::find_if(last.begin(), last.end(),
                           [&](const kube::PodInfo& info) { return info.name == p.name; });
    const std::string phase = it == last.end() ? "missing" : it->phase;
    auto log =
        client_->request("GET", kube::pod_log_path(namespace_, p.name) + "?limitBytes=65536");
    std::optional<ProbeResult> result;
    if (log && log->status == 200) result = result_in(log->body, p.node);
    if (result) {
      results.push_back(std::move(*result));
    } else {
      std::string why = phase;
      if (it != last.end() && it->container && !it->container->reason.empty()) {
        why += " (" + it->container->reason + ")";
      }
      failures.push_back(p.node + ": " + why);
    }
  }
  clean_up();
  if (results.empty()) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": no probe pod printed a result (" +
                                         join(failures) + ")");
  }
  return results;
}

}  // namespace orch
