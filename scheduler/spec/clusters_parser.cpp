#include "scheduler/spec/clusters_parser.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
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
  if (provider == "local" || provider == "slurm" || provider == "kubernetes") return;
  entry.reader().fail(
      entry.value_position("provider"),
      "\"provider\" must be one of local, slurm, kubernetes, got \"" + provider + "\"", "local");
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

bool is_fingerprint(std::string_view s) {
  return s.size() > 7 && s.substr(0, 7) == "SHA256:";
}
bool is_signal_name(std::string_view s) {
  if (s.empty() || s.size() > 8) return false;
  for (char ch : s) {
    if (!((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))) return false;
  }
  return true;
}
constexpr yaml::StringRule kFingerprint{is_fingerprint,
                                        "a SHA256 fingerprint as ssh-keygen -lf prints it"};
constexpr yaml::StringRule kSignalName{is_signal_name, "a signal name such as USR1"};

void read_ssh(const MapView& entry, ClusterSpec& c) {
  MapView ssh =
      entry.child("ssh", "ssh",
                  {"host", "port", "user", "key_file", "key_passphrase_env", "host_key",
                   "known_hosts", "trust_on_first_use", "connect_timeout_s", "command_timeout_s"},
                  "a map such as {host: login.alpha.example, user: train, "
                  "key_file: ~/.ssh/id_ed25519, known_hosts: ~/.ssh/known_hosts}");
  SshSpec& s = c.ssh;
  ssh.read_string("host", s.host, yaml::kNonEmpty, "a host name or address");
  ssh.read_int("port", s.port, 1, 65535, "a TCP port such as 22");
  ssh.read_string("user", s.user, yaml::kNonEmpty, "a user name");
  ssh.read_string("key_file", s.key_file, yaml::kNonEmpty, "a private key file");
  ssh.read_string("key_passphrase_env", s.key_passphrase_env, yaml::kEnvVarName,
                  "the name of an environment variable");
  ssh.read_string("host_key", s.host_key, kFingerprint, "a fingerprint such as SHA256:abc...");
  ssh.read_string("known_hosts", s.known_hosts, yaml::kNonEmpty, "a known_hosts file");
  ssh.read_bool("trust_on_first_use", s.trust_on_first_use, "true or false");
  ssh.read_number("connect_timeout_s", s.connect_timeout_s, {0.0, true}, "seconds such as 10");
  ssh.read_number("command_timeout_s", s.command_timeout_s, {0.0, true}, "seconds such as 60");
  if (entry.reader().failed()) return;
  const std::string want = "ssh {host, user, key_file} for a slurm cluster";
  if (!entry.has("ssh")) {
    entry.reader().fail(entry.position(),
                        "cluster \"" + c.name + "\" has provider slurm but no \"ssh\" section",
                        want);
    return;
  }
  ssh.require("host", "the login node's host name or address");
  ssh.require("user", "the user to log in as");
  ssh.require("key_file", "a private key file such as ~/.ssh/id_ed25519");
  if (entry.reader().failed()) return;
  if (s.host_key.empty() && s.known_hosts.empty() && !s.trust_on_first_use) {
    entry.reader().fail(
        ssh.position(),
        "ssh of cluster \"" + c.name + "\" gives no way to check the login node's host key",
        "host_key (a pinned SHA256 fingerprint) or known_hosts (a file), or "
        "trust_on_first_use: true");
  }
}

void read_slurm(const MapView& entry, ClusterSpec& c) {
  MapView slurm = entry.child(
      "slurm", "slurm",
      {"partition", "account", "qos", "gres", "time_limit", "pre_term_signal", "pre_term_s"},
      "a map such as {partition: gpu, account: team, qos: normal}");
  SlurmSpec& s = c.slurm;
  slurm.read_string("partition", s.partition, yaml::kNonEmpty, "a partition name");
  slurm.read_string("account", s.account, yaml::kNonEmpty, "an account name");
  slurm.read_string("qos", s.qos, yaml::kNonEmpty, "a QOS name");
  slurm.read_string("gres", s.gres, yaml::kNonEmpty, "a GRES name such as gpu or gpu:h100");
  slurm.read_string("time_limit", s.time_limit, yaml::kNonEmpty, "a Slurm time such as 2-00:00:00");
  slurm.read_string("pre_term_signal", s.pre_term_signal, kSignalName, "a signal such as USR1");
  slurm.read_int("pre_term_s", s.pre_term_s, 0, 65535, "seconds such as 120");
}

void read_kubernetes(const MapView& entry, ClusterSpec& c) {
  MapView k = entry.child(
      "kubernetes", "kubernetes",
      {"kubeconfig", "context", "namespace", "image", "gpu_resource", "termination_grace_s"},
      "a map such as {kubeconfig: ~/.kube/config, context: gpu-cloud, "
      "image: nvcr.io/nvidia/pytorch:24.05-py3}");
  KubernetesSpec& s = c.kubernetes;
  k.read_string("kubeconfig", s.kubeconfig, yaml::kNonEmpty, "a kubeconfig file");
  k.read_string("context", s.context, yaml::kNonEmpty, "a context of the kubeconfig");
  k.read_string("namespace", s.namespace_, yaml::kNonEmpty, "a namespace");
  k.read_string("image", s.image, yaml::kNonEmpty, "a container image");
  k.read_string("gpu_resource", s.gpu_resource, yaml::kNonEmpty,
                "an extended resource such as nvidia.com/gpu");
  k.read_int("termination_grace_s", s.termination_grace_s, 0, 86400, "seconds such as 120");
  if (entry.reader().failed()) return;
  if (!entry.has("kubernetes")) {
    entry.reader().fail(
        entry.position(),
        "cluster \"" + c.name + "\" has provider kubernetes but no " + "\"kubernetes\" section",
        "kubernetes {kubeconfig, image} for a kubernetes cluster");
    return;
  }
  k.require("kubeconfig", "a kubeconfig file such as ~/.kube/config");
  k.require("image", "the container image jobs run in");
}

// The provider each provider-specific section belongs to.
constexpr std::pair<std::string_view, std::string_view> kSectionOwners[] = {
    {"ssh", "slurm"}, {"slurm", "slurm"}, {"kubernetes", "kubernetes"}};

void read_provider_sections(const MapView& entry, ClusterSpec& c) {
  yaml::Reader& r = entry.reader();
  for (auto [section, owner] : kSectionOwners) {
    if (!entry.has(section) || owner == c.provider) continue;
    r.fail(entry.key_position(section),
           "\"" + std::string(section) + "\" applies only to provider " + std::string(owner) +
               ", and cluster \"" + c.name + "\" has provider " + c.provider,
           "provider: " + std::string(owner) + ", or no \"" + std::string(section) + "\" section");
    return;
  }
  if (c.provider == "kubernetes") read_kubernetes(entry, c);
  if (c.provider == "slurm") {
    read_slurm(entry, c);
    if (!r.failed()) read_ssh(entry, c);
    if (!r.failed() && c.storage_root.empty()) {
      r.fail(entry.position(), "cluster \"" + c.name + "\" has provider slurm but no storage.root",
             "storage: {root: <a directory on the cluster's shared filesystem>}");
    }
  }
}

void read_burn_in(const MapView& entry, ClusterSpec& c) {
  MapView b = entry.child(
      "burn_in", "burn_in",
      {"on_join", "min_compute_ratio", "min_io_ratio", "dir", "io_mb", "compute_s", "timeout_s"},
      "a map such as {on_join: true, min_compute_ratio: 0.9, min_io_ratio: 0.9}");
  BurnInSpec& s = c.burn_in;
  b.read_bool("on_join", s.on_join, "true or false");
  b.read_number("min_compute_ratio", s.min_compute_ratio, {0.0, false}, "a ratio such as 0.9");
  b.read_number("min_io_ratio", s.min_io_ratio, {0.0, false}, "a ratio such as 0.9");
  b.read_string("dir", s.dir, yaml::kNonEmpty, "a directory on the filesystem to measure");
  b.read_number("io_mb", s.io_mb, {0.0, true}, "megabytes such as 64");
  b.read_number("compute_s", s.compute_s, {0.0, true}, "seconds such as 1");
  b.read_number("timeout_s", s.timeout_s, {0.0, true}, "seconds such as 300");
  for (const char* key : {"min_compute_ratio", "min_io_ratio"}) {
    double v = std::string_view(key) == "min_io_ratio" ? s.min_io_ratio : s.min_compute_ratio;
    if (b.reader().failed() || v <= 1.0) continue;
    b.reader().fail(b.value_position(key),
                    "\"" + std::string(key) + "\" must be at most 1, got " + yaml::format_number(v),
                    "a share of the cluster median such as 0.9");
  }
}

void read_quarantine(const MapView& entry, ClusterSpec& c) {
  MapView q = entry.child("quarantine", "quarantine",
                          {"failures", "window_h", "cooldown_h", "retire_after"},
                          "a map such as {failures: 2, window_h: 168, cooldown_h: 1}");
  QuarantineSpec& s = c.quarantine;
  q.read_int("failures", s.failures, 1, 1000, "a count such as 2");
  q.read_number("window_h", s.window_h, {0.0, true}, "hours such as 168");
  q.read_number("cooldown_h", s.cooldown_h, {0.0, false}, "hours such as 1");
  q.read_int("retire_after", s.retire_after, 1, 1000, "a count such as 3");
}

void read_cluster(MapView& entry, ClusterSpec& c) {
  entry.require("name", "a cluster name such as alpha");
  entry.read_string("name", c.name, yaml::kName, "a name such as alpha");
  entry.read_string("provider", c.provider, yaml::kNonEmpty, "local");
  entry.read_string("vendor", c.vendor, yaml::kNonEmpty, "the company renting it out, e.g. acme");
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
  if (!entry.reader().failed()) read_burn_in(entry, c);
  if (!entry.reader().failed()) read_quarantine(entry, c);
  if (!entry.reader().failed()) read_provider_sections(entry, c);
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
    MapView entry(
        r, item, context,
        {"name", "provider", "vendor", "nodes", "gpus_per_node", "accelerator", "peak_tflops",
         "storage", "unreachable_grace_s", "poll_interval_ms", "burn_in", "quarantine", "ssh",
         "slurm", "kubernetes"},
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
