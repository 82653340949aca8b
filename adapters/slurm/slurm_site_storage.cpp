// SlurmSite::manifest and SlurmSite::remove_path: the scripts of adapters/storage
// (storage_script.h) run on the login node, which sees the cluster's shared filesystem, over a
// second SSH session of this site's own (see slurm_site.h for why and for the deadlines).
// Session errors pass through as they are: a login node that does not answer is unreachable.

#include <algorithm>
#include <chrono>

#include "adapters/slurm/slurm_site.h"
#include "adapters/storage/storage_script.h"

namespace orch {
namespace {

using std::chrono::milliseconds;

milliseconds command_timeout(const SshSpec& ssh) {
  return milliseconds(static_cast<std::int64_t>(std::max(ssh.command_timeout_s, 0.001) * 1e3));
}

Error with_site(const std::string& site, const Error& e) {
  const std::string prefix = "site " + site + ": ";
  if (e.message.compare(0, prefix.size(), prefix) == 0) return e;  // SshSession's own
  return make_error(e.kind, prefix + e.message);
}

}  // namespace

SshSession& SlurmSite::storage_ssh() {
  std::lock_guard<std::mutex> lock(storage_mu_);
  if (!storage_ssh_) {
    SshSpec spec = spec_.ssh;
    // Trusting on first use: the key the main session already trusted is the only one this
    // session accepts (no second, independent first use).
    if (spec.host_key.empty() && spec.trust_on_first_use) {
      spec.host_key = ssh_->server_fingerprint();
    }
    storage_ssh_ = std::make_unique<SshSession>(spec_.name, std::move(spec));
  }
  return *storage_ssh_;
}

Result<Manifest> SlurmSite::manifest(const ManifestRequest& request) {
  auto script = storage::manifest_script(request);
  if (!script) return with_site(spec_.name, script.error());
  milliseconds timeout = command_timeout(spec_.ssh);
  if (request.hash != ManifestRequest::Hash::none) {
    auto sizes = manifest({request.path, ManifestRequest::Hash::none, {}, request.within});
    if (!sizes) return sizes.error();
    timeout = storage::hash_deadline(timeout, *sizes);
  }
  auto r = storage_ssh().exec(*script, timeout);
  if (!r) return with_site(spec_.name, r.error());
  auto m = storage::parse_manifest_output(r->out, r->err, r->exit_status, request.path);
  if (!m) return with_site(spec_.name, m.error());
  return m;
}

Result<void> SlurmSite::remove_path(const RemoveRequest& request) {
  auto script = storage::remove_script(request);
  if (!script) return with_site(spec_.name, script.error());
  // Listed first for the deadline, confined as the deletion is: a copy outside is refused here.
  auto listing = manifest({request.path, ManifestRequest::Hash::none, {}, request.within});
  if (!listing) {
    if (listing.error().kind == ErrorKind::not_found) return Ok{};  // nothing to delete
    return listing.error();
  }
  const milliseconds timeout = storage::delete_deadline(command_timeout(spec_.ssh), *listing);
  auto r = storage_ssh().exec(*script, timeout);
  if (!r) return with_site(spec_.name, r.error());
  auto checked = storage::check_remove_output(r->out, r->err, r->exit_status, request);
  if (!checked) return with_site(spec_.name, checked.error());
  return Ok{};
}

}  // namespace orch
