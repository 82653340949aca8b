#include "scheduler/spec/clusters_parser.h"

#include "scheduler/model/workdir.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "scheduler/common/utf8.h"
#include "scheduler/model/accelerators.h"
#include "scheduler/model/checkpoint_dir.h"
#include "scheduler/model/launch_limits.h"
#include "scheduler/spec/burn_in_gpu_section.h"
#include "scheduler/spec/fabric_section.h"
#include "scheduler/spec/live_watch_section.h"
#include "scheduler/spec/price_section.h"
#include "scheduler/spec/provider_catalog.h"
#include "scheduler/spec/provider_sections.h"
#include "scheduler/spec/rate_limits_section.h"
#include "scheduler/spec/scheduling_section.h"
#include "scheduler/spec/secrets_section.h"
#include "scheduler/spec/time_window.h"
#include "scheduler/spec/webhooks_section.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {
namespace {

using yaml::MapView;

constexpr std::string_view kClusterExample =
    "a map such as {name: alpha, provider: local, nodes: 2, gpus_per_node: 4}";

void read_server(const MapView& file, ServerSpec& server) {
  MapView s = file.child("server", "server", {"bind", "port", "hosts", "tls", "rate_limits"},
                         "a map such as {bind: 127.0.0.1, port: 8080}");
  s.read_string("bind", server.bind, yaml::kNonEmpty, "an address such as 127.0.0.1");
  s.read_int("port", server.port, 0, 65535, "a TCP port such as 8080");
  s.read_string_list("hosts", server.hosts, yaml::kNonEmpty,
                     "host names such as [orchestrate.example.com]");
  read_rate_limits(s, server.rate_limits);
  const std::string tls_shape =
      "a map such as {cert: /etc/orchestrate/server.crt, key: "
      "/etc/orchestrate/server.key}";
  MapView tls = s.child("tls", "server.tls", {"cert", "key"}, tls_shape);
  if (!s.has("tls")) return;
  tls.read_string("cert", server.tls.cert, yaml::kNonEmpty,
                  "the server's certificate chain, a PEM file");
  tls.read_string("key", server.tls.key, yaml::kNonEmpty,
                  "the certificate's private key, a PEM file");
  tls.require("cert", "cert: the server's certificate chain, a PEM file");
  tls.require("key", "key: the certificate's private key, a PEM file");
}

void check_provider(const MapView& entry, const std::string& provider) {
  if (const ProviderTraits* p = find_provider(provider); p != nullptr && p->in_clusters_file)
    return;
  entry.reader().fail(
      entry.value_position("provider"),
      "\"provider\" must be one of " + provider_names() + ", got \"" + provider + "\"", "local");
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

// A key that needs a launch pinned to a named node (node-local copies, hot spares): refused,
// at the key, on a provider that cannot pin one, saying what would go wrong (`so`).
void refuse_without_pinning(MapView& view, std::string_view key, const std::string& provider,
                            const std::string& so, const std::string& instead) {
  const ProviderTraits* p = find_provider(provider);
  if (p == nullptr || p->node_local_copies) return;
  view.reader().fail(view.value_position(key),
                     "provider " + provider + " cannot start a job on a named node, so " + so,
                     instead);
}

// storage.node_local: an absolute directory in normal form, on a provider that can pin a launch
// to a node (else a copy there could never be resumed from).
void read_node_local(MapView& storage, ClusterSpec& c) {
  storage.read_string("node_local", c.node_local_root, yaml::kNonEmpty,
                      "a directory on each node's own disk such as /local/nvme/orch");
  if (c.node_local_root.empty() || storage.reader().failed()) return;
  const std::string example = "a directory on each node's own disk such as /local/nvme/orch";
  auto normal = normal_absolute_path(c.node_local_root);
  if (!normal || *normal != c.node_local_root) {
    storage.reader().fail(
        storage.value_position("node_local"),
        "\"node_local\" must be an absolute path in normal form, got \"" + c.node_local_root + "\"",
        example);
    return;
  }
  refuse_without_pinning(storage, "node_local", c.provider,
                         "a copy on a node's own disk could never be resumed from",
                         "no \"node_local\" on this cluster (its checkpoints stay shared)");
}

// spares: fewer than the cluster's nodes, on a provider that can pin a launch to a node (a
// spare is a named node held for a gang's next launch there).
void read_spares(MapView& entry, ClusterSpec& c) {
  const std::string example = "a node count below the cluster's nodes, such as 1";
  entry.read_int("spares", c.spares, 0, INT_MAX, example);
  if (c.spares == 0 || entry.reader().failed()) return;
  if (c.spares >= c.nodes) {
    entry.reader().fail(entry.value_position("spares"),
                        "\"spares\" must be below the cluster's " + std::to_string(c.nodes) +
                            " node(s), got " + std::to_string(c.spares) +
                            ": spares are held idle, and a job needs a node to run on",
                        example);
    return;
  }
  refuse_without_pinning(entry, "spares", c.provider,
                         "it cannot hold hot spares (placeholder pods of a low priority class are "
                         "not built yet)",
                         "no \"spares\" on this cluster");
}

// The provider's own sections: refused on another provider's cluster, read by the provider's
// reader (provider_catalog.h), and its storage root required where it needs one.
void read_provider_sections(const MapView& entry, ClusterSpec& c) {
  yaml::Reader& r = entry.reader();
  const ProviderTraits* provider = find_provider(c.provider);
  if (provider == nullptr) return;  // check_provider has failed the file
  for (const ProviderTraits& owner : provider_catalog()) {
    if (&owner == provider) continue;
    for (std::string_view section : owner.sections) {
      if (!entry.has(section)) continue;
      r.fail(entry.key_position(section),
             "\"" + std::string(section) + "\" applies only to provider " +
                 std::string(owner.name) + ", and cluster \"" + c.name + "\" has provider " +
                 c.provider,
             "provider: " + std::string(owner.name) + ", or no \"" + std::string(section) +
                 "\" section");
      return;
    }
  }
  if (provider->read_sections) provider->read_sections(entry, c);
  if (!r.failed() && provider->storage_root == StorageRoot::required && c.storage_root.empty()) {
    r.fail(entry.position(),
           "cluster \"" + c.name + "\" has provider " + c.provider + " but no storage.root",
           "storage: {root: <a directory on the cluster's shared filesystem>}");
  }
}

void read_burn_in(const MapView& entry, ClusterSpec& c) {
  MapView b = entry.child(
      "burn_in", "burn_in",
      {"on_join", "min_compute_ratio", "min_io_ratio", "dir", "io_mb", "compute_s", "timeout_s",
       "gpu", "fabric"},
      "a map such as {on_join: true, min_compute_ratio: 0.9, min_io_ratio: 0.9}");
  BurnInSpec& s = c.burn_in;
  b.read_bool("on_join", s.on_join, "true or false");
  b.read_number("min_compute_ratio", s.min_compute_ratio, {0.0, false}, "a ratio such as 0.9");
  b.read_number("min_io_ratio", s.min_io_ratio, {0.0, false}, "a ratio such as 0.9");
  b.read_string("dir", s.dir, yaml::kNonEmpty, "a directory on the filesystem to measure");
  // orchestrate-agent probe refuses more than --io-bytes 2^40 and --compute-s 3600.
  b.read_number("io_mb", s.io_mb, {0.0, true, static_cast<double>(limits::kMaxProbeIoBytes >> 20)},
                "megabytes such as 64");
  b.read_number("compute_s", s.compute_s, {0.0, true, limits::kMaxProbeComputeS},
                "seconds such as 1");
  b.read_number("timeout_s", s.timeout_s, kPositiveSeconds, "seconds such as 300");
  for (const char* key : {"min_compute_ratio", "min_io_ratio"}) {
    double v = std::string_view(key) == "min_io_ratio" ? s.min_io_ratio : s.min_compute_ratio;
    if (b.reader().failed() || v <= 1.0) continue;
    b.reader().fail(b.value_position(key),
                    "\"" + std::string(key) + "\" must be at most 1, got " + yaml::format_number(v),
                    "a share of the cluster median such as 0.9");
  }
  if (!b.reader().failed()) read_burn_in_gpu(b, s.gpu);
  if (!b.reader().failed()) read_burn_in_fabric(b, s.fabric);
}

void read_delivery(const MapView& entry, ClusterSpec& c) {
  MapView d =
      entry.child("delivery", "delivery", {"promised"}, "a map such as {promised: 2026-12-10}");
  d.read_string("promised", c.delivery.promised, yaml::kNonEmpty, "a date such as 2026-12-10");
  if (d.reader().failed() || c.delivery.promised.empty()) return;
  c.delivery.promised_ms = utc_date_ms(c.delivery.promised);
  if (!c.delivery.promised_ms) {
    d.reader().fail(d.value_position("promised"),
                    "\"promised\" must be a date YYYY-MM-DD, got \"" + c.delivery.promised + "\"",
                    "the date the provider promised, such as 2026-12-10");
  }
}

void read_quarantine(const MapView& entry, ClusterSpec& c) {
  MapView q = entry.child("quarantine", "quarantine",
                          {"failures", "window_h", "cooldown_h", "retire_after"},
                          "a map such as {failures: 2, window_h: 168, cooldown_h: 1}");
  QuarantineSpec& s = c.quarantine;
  q.read_int("failures", s.failures, 1, 1000, "a count such as 2");
  const double year_h = limits::kMaxDurationS / 3600;
  q.read_number("window_h", s.window_h, {0.0, true, year_h}, "hours such as 168");
  q.read_number("cooldown_h", s.cooldown_h, {0.0, false, year_h}, "hours such as 1");
  q.read_int("retire_after", s.retire_after, 1, 1000, "a count such as 3");
}

// A pull_from entry as written, checked against the other clusters once all are read.
struct PeerRef {
  std::string cluster;  // the cluster whose data.pull_from names it
  std::string peer;
  yaml::Position at;
};

void read_peer(yaml::Reader& r, const std::string& cluster, const yaml::Field& field,
               DataSpec& data, std::vector<PeerRef>& refs) {
  const std::string& peer_name = field.key;
  if (field.value.IsNull()) {
    // yaml-cpp marks an empty value on the next line; the key is where the user looks.
    r.fail(yaml::position_of(field.key_node),
           "missing required key \"host\" in data.pull_from." + peer_name,
           "a map such as {host: 10.0.0.5, user: svc, key_file: ~/.ssh/id_ed25519, "
           "known_hosts: ~/.ssh/known_hosts}");
    return;
  }
  MapView peer(r, field.value, "data.pull_from." + peer_name,
               {"host", "port", "user", "key_file", "known_hosts"},
               "a map such as {host: 10.0.0.5, user: svc, key_file: ~/.ssh/id_ed25519, "
               "known_hosts: ~/.ssh/known_hosts}");
  PeerSpec p;
  peer.read_string("host", p.host, yaml::kNonEmpty, "the other site's login node, as seen here");
  peer.read_int("port", p.port, 1, 65535, "a TCP port such as 22");
  peer.read_string("user", p.user, yaml::kNonEmpty, "the user to log in as there");
  peer.read_string("key_file", p.key_file, yaml::kNonEmpty,
                   "a private key file on this site's login node");
  peer.read_string("known_hosts", p.known_hosts, yaml::kNonEmpty,
                   "a known_hosts file on this site's login node");
  if (r.failed()) return;
  // Every field but the port is required: a pull without a pinned host key is refused.
  peer.require("host", "host: the other site's login node, as seen from this one");
  peer.require("user", "user: the account to log in as there");
  peer.require("key_file", "key_file: a private key on this site's login node");
  peer.require("known_hosts", "known_hosts: a file on this site's login node with its host key");
  if (r.failed()) return;
  refs.push_back(PeerRef{cluster, peer_name, yaml::position_of(field.key_node)});
  data.pull_from.emplace(peer_name, std::move(p));
}

void read_pull_from(const MapView& data_view, const std::string& cluster, DataSpec& data,
                    std::vector<PeerRef>& refs) {
  yaml::Reader& r = data_view.reader();
  const yaml::Field* f = data_view.find("pull_from");
  if (!f || f->value.IsNull()) return;
  const std::string example = "a map from cluster name to {host, user, key_file, known_hosts}";
  if (!f->value.IsMap()) {
    r.fail(data_view.value_position("pull_from"),
           "\"pull_from\" must be a map, got " + yaml::describe(f->value), example);
    return;
  }
  std::map<std::string, int> lines;  // peer -> line first given
  for (auto it = f->value.begin(); it != f->value.end() && !r.failed(); ++it) {
    yaml::Field field{"", it->first, it->second};
    if (!field.key_node.IsScalar() || !yaml::is_name(field.key_node.Scalar())) {
      r.fail(yaml::position_of(field.key_node),
             "a key of \"pull_from\" must be " + std::string(yaml::kName.must) + ", got " +
                 yaml::describe(field.key_node),
             "the name of another cluster in this file");
      return;
    }
    field.key = field.key_node.Scalar();
    const yaml::Position at = yaml::position_of(field.key_node);
    if (auto [first, fresh] = lines.emplace(field.key, at.line); !fresh) {
      r.fail(at, "key \"" + field.key + "\" appears twice in data.pull_from",
             "each cluster once (first given at line " + std::to_string(first->second) + ")");
      return;
    }
    read_peer(r, cluster, field, data, refs);
  }
}

void read_data(const MapView& entry, ClusterSpec& c, std::vector<PeerRef>& refs) {
  MapView d = entry.child(
      "data", "data",
      {"bwlimit_mb_s", "windows", "datasets_root", "audit_interval_s", "throttle", "pull_from"},
      "a map such as {bwlimit_mb_s: 100, windows: [\"22:00-06:00\"], audit_interval_s: 600}");
  DataSpec& s = c.data;
  d.read_number("bwlimit_mb_s", s.bwlimit_mb_s, {0.0, false}, "MB/s such as 100 (0: no cap)");
  d.read_string_list("windows", s.windows, yaml::kNonEmpty,
                     "a list of UTC windows such as [\"22:00-06:00\"]");
  if (!d.reader().failed() && d.has("windows")) {
    const YAML::Node& list = d.find("windows")->value;
    for (std::size_t i = 0; i < s.windows.size(); ++i) {
      auto w = parse_window(s.windows[i]);
      if (w.ok()) continue;
      d.reader().fail(yaml::position_of(list[i]), "data.windows: " + w.error().message,
                      kWindowExpected);
      break;
    }
  }
  d.read_string("datasets_root", s.datasets_root, yaml::kNonEmpty,
                "a directory such as /lustre/team/datasets");
  d.read_number("audit_interval_s", s.audit_interval_s, {0.0, false, limits::kMaxDurationS},
                "seconds such as 600 (0: never)");
  MapView t = d.child("throttle", "data.throttle",
                      {"mfu_drop_percent", "decrease", "increase_mb_s", "min_mb_s", "interval_s"},
                      "a map such as {mfu_drop_percent: 3, decrease: 0.5, min_mb_s: 1}");
  ThrottleSpec& th = s.throttle;
  t.read_number("mfu_drop_percent", th.mfu_drop_percent, {0.0, true}, "a percentage such as 3");
  t.read_number("decrease", th.decrease, {0.0, true}, "a factor below 1 such as 0.5");
  t.read_number("increase_mb_s", th.increase_mb_s, {0.0, false},
                "MB/s such as 5 (0: a tenth of the cap)");
  t.read_number("min_mb_s", th.min_mb_s, {0.0, true}, "MB/s such as 1");
  t.read_number("interval_s", th.interval_s, kPositiveSeconds, "seconds such as 10");
  if (!t.reader().failed() && th.mfu_drop_percent >= 100) {
    t.reader().fail(
        t.value_position("mfu_drop_percent"),
        "\"mfu_drop_percent\" must be below 100, got " + yaml::format_number(th.mfu_drop_percent),
        "a percentage such as 3");
  }
  if (!t.reader().failed() && th.decrease >= 1) {
    t.reader().fail(t.value_position("decrease"),
                    "\"decrease\" must be below 1, got " + yaml::format_number(th.decrease),
                    "a factor below 1 such as 0.5");
  }
  if (!d.reader().failed()) read_pull_from(d, c.name, s, refs);
}

// Each pull_from key must name another cluster of the file.
void check_peers(yaml::Reader& r, const std::vector<ClusterSpec>& clusters,
                 const std::vector<std::string>& also_known, const std::vector<PeerRef>& refs) {
  for (const PeerRef& ref : refs) {
    if (ref.peer == ref.cluster) {
      r.fail(ref.at, "cluster \"" + ref.cluster + "\" cannot pull from itself in data.pull_from",
             "the name of another cluster in this file");
      return;
    }
    std::vector<std::string_view> others;
    bool found = false;
    for (const ClusterSpec& c : clusters) {
      if (c.name == ref.peer) found = true;
      if (c.name != ref.cluster) others.push_back(c.name);
    }
    for (const std::string& name : also_known) {
      if (name == ref.peer) found = true;
      others.push_back(name);
    }
    if (found) continue;
    std::string message = "data.pull_from of cluster \"" + ref.cluster + "\" names \"" + ref.peer +
                          "\", which is not a cluster in this file";
    if (auto near = yaml::nearest(ref.peer, others)) {
      message += " (did you mean \"" + std::string(*near) + "\"?)";
    }
    r.fail(ref.at, message,
           others.empty() ? std::string("no pull_from: there is no other cluster")
                          : "one of " + yaml::join(others, ", "));
    return;
  }
}

void read_cluster(MapView& entry, ClusterSpec& c, std::vector<PeerRef>& refs) {
  entry.require("name", "a cluster name such as alpha");
  entry.read_string("name", c.name, yaml::kName, "a name such as alpha");
  // The server's own sources of transfers go by these names (its code store, its relay).
  if (!entry.reader().failed() && (c.name == kCodeStoreSite || c.name == "orchestrate-relay")) {
    entry.reader().fail(entry.value_position("name"),
                        "cluster name \"" + c.name + "\" is the server's own",
                        "another name: orchestrate-server and orchestrate-relay are reserved");
    return;
  }
  entry.read_string("provider", c.provider, yaml::kNonEmpty, "local");
  entry.read_string("vendor", c.vendor, yaml::kNonEmpty, "the company renting it out, e.g. acme");
  if (entry.has("provider") && !entry.reader().failed()) check_provider(entry, c.provider);
  entry.read_int("nodes", c.nodes, 1, INT_MAX, "a node count such as 2");
  entry.read_int("gpus_per_node", c.gpus_per_node, 1, INT_MAX, "an integer such as 8");
  entry.read_string("accelerator", c.accelerator, yaml::kNonEmpty, "an accelerator such as h100");
  entry.read_number("peak_tflops", c.peak_tflops, {0.0, true}, "TFLOP/s such as 989");
  MapView storage = entry.child("storage", "storage", {"root", "checkpoints", "node_local"},
                                "a map such as {root: /var/lib/orch/alpha, checkpoints: /ckpt}");
  storage.read_string("root", c.storage_root, yaml::kNonEmpty, "a directory such as /data/orch");
  storage.read_string("checkpoints", c.checkpoint_root, yaml::kNonEmpty,
                      "a directory such as /shared/ckpt");
  read_node_local(storage, c);
  entry.read_number("unreachable_grace_s", c.unreachable_grace_s,
                    {0.0, false, limits::kMaxHangAfterS}, "seconds such as 180 (at most 30 days)");
  entry.read_int("poll_interval_ms", c.poll_interval_ms, 10, 60000, "milliseconds such as 1000");
  if (!entry.reader().failed()) read_spares(entry, c);
  if (!entry.reader().failed()) check_accelerator(entry, c);
  if (!entry.reader().failed()) read_burn_in(entry, c);
  if (!entry.reader().failed()) read_live_watch(entry, c.live_watch);
  if (!entry.reader().failed()) read_quarantine(entry, c);
  if (!entry.reader().failed()) read_delivery(entry, c);
  if (!entry.reader().failed()) read_data(entry, c, refs);
  if (!entry.reader().failed()) read_provider_sections(entry, c);
}

// Every key a cluster entry may have: the common ones and every provider's sections.
const std::vector<std::string_view>& cluster_keys() {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> out = {"name",
                                         "provider",
                                         "vendor",
                                         "nodes",
                                         "gpus_per_node",
                                         "accelerator",
                                         "peak_tflops",
                                         "storage",
                                         "unreachable_grace_s",
                                         "poll_interval_ms",
                                         "spares",
                                         "burn_in",
                                         "live_watch",
                                         "quarantine",
                                         "data",
                                         "delivery",
                                         "price"};
    for (const ProviderTraits& p : provider_catalog()) {
      out.insert(out.end(), p.sections.begin(), p.sections.end());
    }
    return out;
  }();
  return keys;
}

void read_clusters(const MapView& file, const std::vector<std::string>& also_known,
                   std::vector<ClusterSpec>& out) {
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
  std::vector<PeerRef> peers;    // data.pull_from entries, checked once every name is known
  for (std::size_t i = 0; i < list.size() && !r.failed(); ++i) {
    const YAML::Node item = list[i];
    std::string context = "clusters[" + std::to_string(i) + "]";
    if (item.IsMap() && item["name"] && item["name"].IsScalar()) {
      context = "cluster \"" + item["name"].Scalar() + "\"";
    }
    MapView entry(r, item, context, cluster_keys(), kClusterExample);
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
    read_cluster(entry, cluster, peers);
    if (!r.failed()) read_price(entry, cluster, out);
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
  if (!r.failed()) check_peers(r, out, also_known, peers);
}

}  // namespace

Result<ClustersFile> parse_clusters_file(std::string_view yaml_text, std::string_view source_name) {
  return parse_clusters_file(yaml_text, source_name, {});
}

Result<ClustersFile> parse_clusters_file(std::string_view yaml_text, std::string_view source_name,
                                         const std::vector<std::string>& also_known) {
  try {
    auto root = yaml::load_document(yaml_text, source_name,
                                    "a clusters file: a map with a \"clusters\" list");
    if (!root) return root.error();
    yaml::Reader reader(source_name);
    MapView file(
        reader, *root, "the clusters file",
        {"server", "clusters", "webhooks", "priority_classes", "teams", "secrets", "placement"},
        "a map with a \"clusters\" list");
    if (reader.failed()) return reader.error();
    ClustersFile out;
    read_server(file, out.server);
    file.require("clusters", "a list of clusters, each " + std::string(kClusterExample));
    read_clusters(file, also_known, out.clusters);
    if (reader.failed()) return reader.error();
    read_webhooks(file, out.webhooks);
    if (reader.failed()) return reader.error();
    read_scheduling(file, out.clusters, out.scheduling);
    if (reader.failed()) return reader.error();
    read_secrets(file, out.secrets);
    if (reader.failed()) return reader.error();
    return out;
  } catch (const std::exception& e) {
    // See parse_job_spec: an unforeseen yaml-cpp exception is still only a bad file.
    return make_error(ErrorKind::invalid,
                      to_valid_utf8(source_name) + ":1:1: could not read the clusters file (" +
                          to_valid_utf8(e.what()) + "); expected a clusters file");
  }
}

Result<ClustersFile> load_clusters_file(const std::string& path,
                                        const std::vector<std::string>& also_known) {
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
  return parse_clusters_file(text.str(), path, also_known);
}

}  // namespace orch
