#include "scheduler/spec/provider_catalog.h"

#include "scheduler/spec/provider_sections.h"

namespace orch {

std::span<const ProviderTraits> provider_catalog() {
  static const std::vector<ProviderTraits> catalog = {
      {.name = "local",
       .sections = {"local"},
       .read_sections = read_local_sections,
       .storage_root = StorageRoot::state_dir,
       .lists_storage = true,
       .data_route = DataRoute::local_fs,
       .node_local_copies = true},
      {.name = "slurm",
       .sections = {"slurm", "ssh"},
       .read_sections = read_slurm_sections,
       .storage_root = StorageRoot::required,
       .lists_storage = true,
       .data_route = DataRoute::ssh,
       .node_local_copies = true},
      {.name = "kubernetes",
       .sections = {"kubernetes"},
       .read_sections = read_kubernetes_sections,
       .storage_root = StorageRoot::optional,
       .lists_storage = true,
       .data_route = DataRoute::pod_exec},
      // The simulated clusters of `orchestrate simulate` (simulator/world): their storage is the
      // simulated world's, and the simulator makes their copies itself.
      {.name = "sim",
       .sections = {},
       .read_sections = nullptr,
       .storage_root = StorageRoot::optional,
       .lists_storage = true,
       .data_route = DataRoute::none,
       .no_data_route_why = "a simulated cluster's copies are made by the simulator",
       .node_local_copies = true,
       .in_clusters_file = false},
  };
  return catalog;
}

const ProviderTraits* find_provider(std::string_view name) {
  for (const ProviderTraits& p : provider_catalog()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string provider_names() {
  std::string out;
  for (const ProviderTraits& p : provider_catalog()) {
    if (!p.in_clusters_file) continue;
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

}  // namespace orch
