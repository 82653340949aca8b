// LocalSite::manifest and LocalSite::remove_path: the site's storage is this host's filesystem,
// listed and deleted by the scripts of adapters/storage run through /bin/sh (local_storage.h:
// 10 minutes for a listing without hashes, 1 hour for hashing or deleting).

#include "adapters/local/local_site.h"
#include "adapters/storage/local_storage.h"

namespace orch {
namespace {

Error with_site(const std::string& site, const Error& e) {
  return make_error(e.kind, "site " + site + ": " + e.message);
}

}  // namespace

Result<Manifest> LocalSite::manifest(const ManifestRequest& request) {
  if (auto up = check_up(); !up) return up.error();
  auto m = storage::local_manifest(request);
  if (!m) return with_site(options_.name, m.error());
  return m;
}

Result<void> LocalSite::remove_path(const RemoveRequest& request) {
  if (auto up = check_up(); !up) return up.error();
  auto removed = storage::local_remove(request);
  if (!removed) return with_site(options_.name, removed.error());
  return Ok{};
}

}  // namespace orch
