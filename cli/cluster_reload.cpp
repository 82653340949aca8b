// The clusters file read again (cluster_reload.h).
#include "cli/cluster_reload.h"

#include <algorithm>

#include "scheduler/spec/clusters_parser.h"

namespace orch {
namespace {

bool has(const std::vector<ClusterSpec>& list, const std::string& name) {
  return std::any_of(list.begin(), list.end(),
                     [&](const ClusterSpec& c) { return c.name == name; });
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

Result<nlohmann::json> reload_clusters_file(const std::string& path,
                                            const std::vector<ClusterSpec>& running,
                                            BrainLoop& loop) {
  auto config = load_clusters_file(path);
  if (!config) {
    return make_error(ErrorKind::invalid, "the clusters file was not reloaded, nothing changed: " +
                                              config.error().message);
  }
  std::vector<std::string> added;
  std::vector<std::string> removed;
  for (const auto& c : config->clusters) {
    if (!has(running, c.name)) added.push_back(c.name);
  }
  for (const auto& c : running) {
    if (has(config->clusters, c.name)) continue;
    auto drained = loop.call(
        SetClusterAdmission{c.name, Admission::draining, "removed from the clusters file"});
    // A retired cluster stays retired; anything else is the brain's error to report.
    if (!drained && drained.error().kind != ErrorKind::conflict) return drained.error();
    removed.push_back(c.name);
  }
  std::string message = "reloaded " + path + ": ";
  if (removed.empty() && added.empty()) message += "no cluster added or removed";
  if (!removed.empty()) {
    message += "no longer in the file, draining: " + joined(removed);
  }
  if (!added.empty()) {
    message += std::string(removed.empty() ? "" : "; ") +
               "new, joining at the next restart: " + joined(added);
  }
  message += "; changes to the other clusters take effect at the next restart";
  return nlohmann::json{{"added", added}, {"removed", removed}, {"message", message}};
}

}  // namespace orch
