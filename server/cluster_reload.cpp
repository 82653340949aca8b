// The clusters file read again (cluster_reload.h).
#include "server/cluster_reload.h"

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
                                            std::vector<ClusterSpec>& from_file,
                                            const std::vector<std::string>& also_known,
                                            BrainLoop& loop, const JoinClusters& join,
                                            const TakeFile& take) {
  auto config = load_clusters_file(path, also_known);
  if (!config) {
    return make_error(ErrorKind::invalid, "the clusters file was not reloaded, nothing changed: " +
                                              config.error().message);
  }
  if (take) {
    if (auto r = take(*config); !r) {
      return make_error(r.error().kind, "the clusters file was not reloaded, nothing changed: " +
                                            r.error().message);
    }
  }
  std::vector<ClusterSpec> joining;
  std::vector<std::string> added;
  std::vector<std::string> removed;
  for (const auto& c : config->clusters) {
    if (has(from_file, c.name)) continue;
    if (std::find(also_known.begin(), also_known.end(), c.name) != also_known.end()) {
      return make_error(ErrorKind::conflict,
                        "the clusters file was not reloaded, nothing changed: cluster \"" + c.name +
                            "\" was added with `orchestrate cluster add` and is running; give the "
                            "file's cluster another name");
    }
    joining.push_back(c);
    added.push_back(c.name);
  }
  if (!joining.empty()) {
    if (auto r = join(joining); !r) {
      return make_error(r.error().kind, "the clusters file was not reloaded, nothing changed: " +
                                            r.error().message);
    }
    from_file.insert(from_file.end(), joining.begin(), joining.end());
  }
  for (const auto& c : from_file) {
    if (has(config->clusters, c.name)) continue;
    auto drained = loop.call(
        SetClusterAdmission{c.name, Admission::draining, "removed from the clusters file"});
    // A retired cluster stays retired; anything else is the brain's error to report.
    if (!drained && drained.error().kind != ErrorKind::conflict) return drained.error();
    removed.push_back(c.name);
  }
  std::string message = "reloaded " + path + ": ";
  if (removed.empty() && added.empty()) message += "no cluster added or removed";
  if (!added.empty()) message += "joined: " + joined(added);
  if (!removed.empty()) {
    message += std::string(added.empty() ? "" : "; ") +
               "no longer in the file, draining: " + joined(removed);
  }
  message += "; changes to the other clusters take effect at the next restart";
  return nlohmann::json{{"added", added}, {"removed", removed}, {"message", message}};
}

}  // namespace orch
