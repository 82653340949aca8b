#include "scheduler/spec/clusters_parser.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "scheduler/model/accelerators.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {
namespace {

using yaml::MapView;

constexpr std::string_view kClusterExample =
    "a map such as {name: alpha, provider: local, nodes: 2, gpus_per_node: 4}";

void read_server(const MapView& file, ServerSpec& server) {
  MapView s = file.child("server", "server", {"bind", "port"},
                         "a map such as {bind: 127.0.0.1, port: 8080}");
  s.read_string("bind", server.bind, yaml::kNonEmpty, "an address such as 127.0.0.1");
  s.read_int("port", server.port, 0, 65535, "a TCP port such as 8080");
}

void check_provider(const MapView& entry, const std::string& provider) {
  if (provider == "local") return;
  yaml::Reader& r = entry.reader();
  if (provider == "slurm" || provider == "kubernetes") {
    r.fail(entry.value_position("provider"), "provider \"" + provider + "\" is not supported yet",
           "local");
  } else {
    r.fail(entry.value_position("provider"),
           "\"provider\" must be one of local, slurm, kubernetes, got \"" + provider + "\"",
           "local");
  }
}

void check_accelerator(const MapView& entry, const ClusterSpec& cluster) {
  // A cluster that states its own peak may use any accelerator name; otherwise the name
  // must be in the table, or MFU could not be computed for jobs placed there.
  if (cluster.peak_tflops || accelerator_peak_flops(cluster.accelerator)) return;
  std::vector<std::string_view> keys;
  for (const auto& a : accelerator_table()) keys.push_back(a.key);
  std::string message = "unknown accelerator \"" + cluster.accelerator + "\"";
  if (auto near = yaml::nearest(cluster.accelerator, keys)) {
    message += " (did you mean \"" + std::string(*near) + "\"?)";
  }
  entry.reader().fail(entry.value_position("accelerator"), message,
                      "one of " + yaml::join(keys, ", ") + ", or set peak_tflops");
}

void read_cluster(MapView& entry, ClusterSpec& c) {
  entry.require("name", "a cluster name such as alpha");
  entry.read_string("name", c.name, yaml::kName, "a name such as alpha");
  entry.read_string("provider", c.provider, yaml::kNonEmpty, "local");
  if (entry.has("provider") && !entry.reader().failed()) check_provider(entry, c.provider);
  entry.read_int("nodes", c.nodes, 1, INT_MAX, "a node count such as 2");
  entry.read_int("gpus_per_node", c.gpus_per_node, 1, INT_MAX, "an integer such as 8");
  entry.read_string("accelerator", c.accelerator, yaml::kNonEmpty, "an accelerator such as h100");
  entry.read_number("peak_tflops", c.peak_tflops, {0.0, true}, "TFLOP/s such as 989");
  MapView storage = entry.child("storage", "storage", {"root", "checkpoints"},
                                "a map such as {root: /var/lib/orch/alpha, checkpoints: /ckpt}");
  storage.read_string("root", c.storage_root, yaml::kNonEmpty, "a directory such as /data/orch");
  storage.read_string("checkpoints", c.checkpoint_root, yaml::kNonEmpty,
                      "a directory such as /shared/ckpt");
  entry.read_number("unreachable_grace_s", c.unreachable_grace_s, {0.0, false},
                    "seconds such as 180");
  entry.read_int("poll_interval_ms", c.poll_interval_ms, 10, 60000, "milliseconds such as 1000");
  if (!entry.reader().failed()) check_accelerator(entry, c);
}

void read_clusters(const MapView& file, std::vector<ClusterSpec>& out) {
  const yaml::Field* field = file.find("clusters");
  yaml::Reader& r = file.reader();
  if (!field) return;
  const YAML::Node& list = field->value;
  if (!list.IsSequence() || list.size() == 0) {
    r.fail(file.value_position("clusters"),
           "\"clusters\" must be a non-empty list, got " +
               (list.IsSequence() ? std::string("an empty list") : yaml::describe(list)),
           "a list of clusters, each " + std::string(kClusterExample));
    return;
  }
  std::vector<int> first_lines;  // line of each accepted cluster, for duplicate messages
  for (std::size_t i = 0; i < list.size() && !r.failed(); ++i) {
    const YAML::Node item = list[i];
    std::string context = "clusters[" + std::to_string(i) + "]";
    if (item.IsMap() && item["name"] && item["name"].IsScalar()) {
      context = "cluster \"" + item["name"].Scalar() + "\"";
    }
    MapView entry(r, item, context,
                  {"name", "provider", "nodes", "gpus_per_node", "accelerator", "peak_tflops",
                   "storage", "unreachable_grace_s", "poll_interval_ms"},
                  kClusterExample);
    if (r.failed()) break;
    if (!item.IsMap()) {
      // yaml-cpp marks an empty item after its "-"; the list's own start is less misleading.
      r.fail(item.IsNull() ? yaml::position_of(list) : yaml::position_of(item),
             "each cluster must be a map, got " + yaml::describe(item) + " at clusters[" +
                 std::to_string(i) + "]",
             kClusterExample);
      break;
    }
    ClusterSpec cluster;
    read_cluster(entry, cluster);
    if (r.failed()) break;
    for (std::size_t j = 0; j < out.size(); ++j) {
      if (out[j].name != cluster.name) continue;
      r.fail(entry.value_position("name"), "duplicate cluster name \"" + cluster.name + "\"",
             "a unique name (\"" + cluster.name + "\" is already used at line " +
                 std::to_string(first_lines[j]) + ")");
      return;
    }
    first_lines.push_back(entry.value_position("name").line);
    out.push_back(std::move(cluster));
  }
}

}  // namespace

Result<ClustersFile> parse_clusters_file(std::string_view yaml_text, std::string_view source_name) {
  try {
    auto root = yaml::load_document(yaml_text, source_name,
                                    "a clusters file: a map with a \"clusters\" list");
    if (!root) return root.error();
    yaml::Reader reader(source_name);
    MapView file(reader, *root, "the clusters file", {"server", "clusters"},
                 "a map with a \"clusters\" list");
    if (reader.failed()) return reader.error();
    ClustersFile out;
    read_server(file, out.server);
    file.require("clusters", "a list of clusters, each " + std::string(kClusterExample));
    read_clusters(file, out.clusters);
    if (reader.failed()) return reader.error();
    return out;
  } catch (const std::exception& e) {
    // See parse_job_spec: an unforeseen yaml-cpp exception is still only a bad file.
    return make_error(ErrorKind::invalid, std::string(source_name) +
                                              ":1:1: could not read the clusters file (" +
                                              e.what() + "); expected a clusters file");
  }
}

Result<ClustersFile> load_clusters_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return make_error(ErrorKind::io, "cannot read clusters file \"" + path +
                                         "\": it is a directory; expected a YAML file such as "
                                         "examples/clusters.yaml");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error(ErrorKind::io, "cannot read clusters file \"" + path +
                                         "\": " + std::strerror(errno) +
                                         "; expected a YAML file such as examples/clusters.yaml");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return make_error(ErrorKind::io, "cannot read clusters file \"" + path + "\": read failed");
  }
  return parse_clusters_file(text.str(), path);
}

}  // namespace orch
