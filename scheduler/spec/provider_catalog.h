#pragma once
// What the rest of orchestrate needs to know about each provider, in one table: the name a
// clusters file gives, the sections of a cluster entry it owns and how they are read, what its
// storage can do and how data reaches it. The parser, the brain and the transfer planner ask
// this table instead of comparing provider names. Making a site of a provider (I/O) is the
// composition root's part: server/site_factories.cpp.
//
// Adding a provider: its adapter folder, a reader of its sections (a *_sections.cpp here, when
// it has any), a row in provider_catalog.cpp and a row in server/site_factories.cpp.

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace orch {

struct ClusterSpec;
namespace yaml {
class MapView;
}

// How checkpoint and dataset copies reach a site's storage.
enum class DataRoute {
  local_fs,  // a directory of this machine: copied here with rsync
  ssh,       // a shared filesystem behind a login node: rsync over SSH
  pod_exec,  // volumes of a Kubernetes cluster: tar streams through pods/exec of a helper pod
  none,      // no route yet (the transfer planner says why)
};

// Where a cluster's storage.root comes from when the file gives none.
enum class StorageRoot {
  state_dir,  // <state>/sites/<name>, a folder of the server's state directory
  required,   // the file must name it (a directory on the cluster's shared filesystem)
  optional,   // the provider has no use for one
};

struct ProviderTraits {
  std::string_view name;
  // Sections of a cluster entry that belong to this provider; another provider's cluster
  // naming one of them is an error.
  std::vector<std::string_view> sections;
  // Reads and checks those sections into the cluster (no I/O); null when there are none.
  void (*read_sections)(const yaml::MapView& entry, ClusterSpec& cluster) = nullptr;
  StorageRoot storage_root = StorageRoot::optional;
  // orchestrate can list, copy to and delete from its storage (replication, audits, staging).
  bool lists_storage = false;
  DataRoute data_route = DataRoute::none;
  // Said when data_route is none: why, and what would make it possible.
  std::string_view no_data_route_why;
  // A launch can be pinned to named nodes (LaunchRequest::on_node, include_nodes): a job can keep
  // copies on a node's own disk (storage.node_local, tiered checkpoints) and the site can hold
  // hot spares (`spares`), both issue 38.
  bool node_local_copies = false;
  // A clusters file may name it. false: made only by a program (the simulator's clusters).
  bool in_clusters_file = true;
};

// Every provider, in the order error messages list them (those a clusters file may name first).
std::span<const ProviderTraits> provider_catalog();
// null when no provider has that name.
const ProviderTraits* find_provider(std::string_view name);
// "local, slurm, kubernetes": those a clusters file may name.
std::string provider_names();

}  // namespace orch
