// KubernetesSite's storage: the storage scripts of adapters/storage (the same as Slurm sites
// run on their login node) run through pods/exec in the site's storage helper pod, which mounts
// the cluster's volumes (copies to and from this host: kube_site_copy.cpp).

#include <chrono>
#include <thread>

#include "adapters/kubernetes/kube_helper_pod.h"
#include "adapters/kubernetes/kube_manifest.h"
#include "adapters/kubernetes/kube_site.h"
#include "adapters/storage/storage_script.h"
#include "scheduler/common/clock.h"
#include "scheduler/model/workdir.h"

namespace orch {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kStorageTimeout{60000};  // a listing without hashes
constexpr milliseconds kHelperStart{180000};    // image pull and scheduling of the helper
constexpr std::int64_t kHelperIdleMs = std::int64_t{10} * 60 * 1000;

std::int64_t now_ms() {
  return SystemClock().now_ms();
}

// Waiting reasons that will not go away by themselves.
bool stuck(const kube::ContainerStatusInfo& c) {
  return c.state == "waiting" &&
         (c.reason == "ErrImagePull" || c.reason == "ImagePullBackOff" ||
          c.reason == "InvalidImageName" || c.reason == "CreateContainerConfigError" ||
          c.reason == "CreateContainerError" || c.reason == "ErrImageNeverPull");
}

}  // namespace

Error KubernetesSite::site_error(const Error& e) const {
  const std::string prefix = "site " + spec_.name + ": ";
  if (e.message.compare(0, prefix.size(), prefix) == 0) return e;
  return make_error(e.kind, prefix + e.message);
}

Result<std::string> KubernetesSite::storage_helper() {
  std::lock_guard<std::mutex> lock(helper_mu_);
  const std::string name = kube::storage_helper_name(spec_.name);
  const std::string path = kube::pods_path(namespace_) + "/" + name;
  helper_used_ms_ = now_ms();
  // A helper on a node that is NotReady or gone (as of the last inventory) is replaced: its
  // commands would hang or fail until the node comes back, if it does.
  const auto node_lost = [this](const std::string& node) {
    std::lock_guard<std::mutex> nodes_lock(mu_);
    if (node.empty() || nodes_.empty()) return false;
    for (const auto& n : nodes_) {
      if (n.info.name == node) return n.ready != "True";
    }
    return true;
  };
  if (helper_running_ && node_lost(helper_node_)) {
    (void)client_->request("DELETE", path + "?gracePeriodSeconds=0");
    helper_running_ = false;
  }
  if (helper_running_) return name;
  const auto deadline = std::chrono::steady_clock::now() + kHelperStart;
  bool created = false;
  for (;;) {
    auto got = client_->request("GET", path);
    if (!got) return got.error();
    if (got->status == 404 && !created) {
      auto body = kube::storage_helper_body(spec_, namespace_);
      if (!body) return site_error(body.error());
      auto made = call("POST", kube::pods_path(namespace_), *body, {409});
      if (!made) return made.error();
      created = true;
      continue;
    }
    if (got->status == 200) {
      auto pod = kube::parse_pod(got->body);
      if (!pod) return site_error(pod.error());
      // One this call made is taken wherever the scheduler put it (the node list may be old).
      const bool lost = !created && node_lost(pod->node_name);
      if (pod->phase == "Running" && !pod->deleting && !lost) {
        helper_running_ = true;
        helper_node_ = pod->node_name;
        return name;
      }
      if (pod->phase == "Succeeded" || pod->phase == "Failed" || pod->deleting || lost) {
        // Past its lifetime, or its node went away or is NotReady: a new one.
        (void)client_->request("DELETE", path + "?gracePeriodSeconds=0");
        created = false;
      } else if (pod->container && stuck(*pod->container)) {
        (void)client_->request("DELETE", path + "?gracePeriodSeconds=0");
        return make_error(ErrorKind::io, "site " + spec_.name + ": the storage helper pod " + name +
                                             " cannot start: " + pod->container->reason + ": " +
                                             pod->container->message);
      }
    } else if (got->status != 404) {
      return make_error(ErrorKind::unreachable, "site " + spec_.name + ": GET " + path +
                                                    " answered " + std::to_string(got->status));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string why = "site " + spec_.name + ": the storage helper pod " + name;
      why += " is not running after " + std::to_string(kHelperStart.count() / 1000);
      why += " s (kubectl describe pod " + name + ")";
      return make_error(ErrorKind::io, why);
    }
    std::this_thread::sleep_for(milliseconds(created ? 200 : 500));
  }
}

void KubernetesSite::retire_idle_helper() {
  std::lock_guard<std::mutex> lock(helper_mu_);
  if (!helper_running_ || now_ms() - helper_used_ms_ < kHelperIdleMs || storage_calls_ > 0) return;
  (void)client_->request("DELETE", kube::pods_path(namespace_) + "/" +
                                       kube::storage_helper_name(spec_.name) +
                                       "?gracePeriodSeconds=0");
  helper_running_ = false;
}

void KubernetesSite::read_setup_failure(const std::string& token, ExitStatus& exit) {
  if (spec_.storage_root.empty()) return;
  auto run = run_in_helper({"cat", "--", kube::setup_failed_marker(spec_, token)}, nullptr, nullptr,
                           kStorageTimeout);
  if (!run || run->exit_code != 0 || run->out.empty()) return;
  ExitStatus s = setup_failed_exit(run->out.substr(0, 64 * 1024));
  s.failed_node = exit.failed_node;
  exit = std::move(s);
}

Result<KubernetesSite::HelperRun> KubernetesSite::run_in_helper(
    const std::vector<std::string>& command, const ExecInput& input, const ExecOutput& output,
    milliseconds timeout) {
  struct Busy {
    KubernetesSite* s;
    explicit Busy(KubernetesSite* site) : s(site) { ++s->storage_calls_; }
    ~Busy() { --s->storage_calls_; }
  } busy(this);
  for (int attempt = 0;; ++attempt) {
    auto pod = storage_helper();
    if (!pod) return pod.error();
    HelperRun run;
    auto collect = [&](int channel, std::string_view data) {
      if (output) return output(channel, data);
      (channel == 1 ? run.out : run.err).append(data);
      return true;
    };
    auto r = client_->exec(namespace_, *pod, std::string(kube::kHelperContainer), command, input,
                           collect, timeout);
    if (r) {
      if (!r->failure.empty()) {
        return make_error(ErrorKind::io,
                          "site " + spec_.name + ": in the storage helper pod: " + r->failure);
      }
      run.exit_code = r->exit_code;
      run.bytes_in = r->bytes_in;
      run.bytes_out = r->bytes_out;
      return run;
    }
    // The helper is gone (deleted, its node lost): make a new one once.
    if (attempt == 0 && r.error().kind == ErrorKind::invalid && !input) {
      std::lock_guard<std::mutex> lock(helper_mu_);
      helper_running_ = false;
      continue;
    }
    return r.error();
  }
}

Result<Manifest> KubernetesSite::manifest(const ManifestRequest& request) {
  auto script = storage::manifest_script(request);
  if (!script) return site_error(script.error());
  milliseconds timeout = kStorageTimeout;
  if (request.hash != ManifestRequest::Hash::none) {
    auto sizes = manifest({request.path, ManifestRequest::Hash::none, {}, request.within});
    if (!sizes) return sizes.error();
    timeout = storage::hash_deadline(timeout, *sizes);
  }
  auto run = run_in_helper({"/bin/sh", "-c", *script}, nullptr, nullptr, timeout);
  if (!run) return run.error();
  auto m = storage::parse_manifest_output(run->out, run->err, run->exit_code, request.path);
  if (!m) return site_error(m.error());
  return m;
}

Result<void> KubernetesSite::remove_path(const RemoveRequest& request) {
  auto script = storage::remove_script(request);
  if (!script) return site_error(script.error());
  // Listed first for the deadline, confined as the deletion is: a copy outside is refused here.
  auto listing = manifest({request.path, ManifestRequest::Hash::none, {}, request.within});
  if (!listing) {
    if (listing.error().kind == ErrorKind::not_found) return Ok{};
    return listing.error();
  }
  auto run = run_in_helper({"/bin/sh", "-c", *script}, nullptr, nullptr,
                           storage::delete_deadline(kStorageTimeout, *listing));
  if (!run) return run.error();
  auto checked = storage::check_remove_output(run->out, run->err, run->exit_code, request);
  if (!checked) return site_error(checked.error());
  return Ok{};
}

}  // namespace orch
