// KubernetesSite's storage: the storage scripts of adapters/storage (the same as Slurm sites
// run on their login node) run through pods/exec in the site's storage helper pod, which mounts
// the cluster's volumes; copies to and from this host are tar streams through the same pod.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "adapters/kubernetes/kube_helper_pod.h"
#include "adapters/kubernetes/kube_manifest.h"
#include "adapters/kubernetes/kube_site.h"
#include "adapters/process/child_process.h"
#include "adapters/storage/storage_script.h"
#include "scheduler/common/clock.h"
#include "scheduler/model/workdir.h"

namespace orch {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kStorageTimeout{60000};  // a listing without hashes
constexpr milliseconds kHelperStart{180000};    // image pull and scheduling of the helper
constexpr std::int64_t kHelperIdleMs = std::int64_t{10} * 60 * 1000;
constexpr double kSlowestCopyRate = 5e6;  // bytes/s: a copy's deadline grows with its size

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

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// `tar -c` of a copy to stdout: a directory's contents, or one file under its own name.
std::vector<std::string> tar_create(const std::string& path, bool directory) {
  return directory ? std::vector<std::string>{"tar", "-c", "-f", "-", "-C", path, "."}
                   : std::vector<std::string>{"tar",           "-c",         "-f", "-", "-C",
                                              parent_of(path), base_of(path)};
}

// Paths that reach a shell or tar as arguments: absolute, no NUL, no "..".
Result<void> check_copy_path(const std::string& path, const std::string& what) {
  if (path.empty() || path.front() != '/' || path.find('\0') != std::string::npos ||
      path.find("/../") != std::string::npos || path.ends_with("/..") || path == "/") {
    return make_error(ErrorKind::invalid, what + " '" + path + "' is not an absolute path");
  }
  return Ok{};
}

// Both ends of a copy: absolute paths, and a single file keeping its name (tar carries it).
Result<void> check_copy(const std::string& from, const std::string& to, bool directory,
                        const std::string& site) {
  if (auto ok = check_copy_path(from, "source"); !ok) return ok.error();
  if (auto ok = check_copy_path(to, "destination"); !ok) return ok.error();
  if (!directory && base_of(from) != base_of(to)) {
    return make_error(ErrorKind::invalid,
                      "a single file keeps its name when copied to or from "
                      "Kubernetes site " +
                          site + " (" + from + " -> " + to + ")");
  }
  return Ok{};
}

// A copy's bytes as they pass: held to the transfer's cap, progress at most 4 times a second.
class CopyMeter {
 public:
  CopyMeter(TransferControl& control, const TransferRequest& request, std::string route)
      : control_(control), started_(std::chrono::steady_clock::now()), last_(started_) {
    progress_.route = std::move(route);
    progress_.bytes_total = request.bytes_hint;
  }

  void add(std::size_t bytes) {
    progress_.bytes_done += bytes;
    const double cap = control_.cap_bytes_per_s();
    progress_.cap_bytes_per_s = cap;
    if (cap > 0) {
      const double should = static_cast<double>(progress_.bytes_done) / cap;
      if (should > seconds())
        std::this_thread::sleep_for(std::chrono::duration<double>(should - seconds()));
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < milliseconds(250)) return;
    last_ = now;
    progress_.rate_bytes_per_s =
        seconds() > 0 ? static_cast<double>(progress_.bytes_done) / seconds() : 0;
    progress_.percent = progress_.bytes_total > 0
                            ? static_cast<int>(std::min<std::uint64_t>(
                                  100, progress_.bytes_done * 100 / progress_.bytes_total))
                            : 0;
    control_.progress(progress_);
  }

  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }
  std::uint64_t bytes_done() const { return progress_.bytes_done; }

  TransferOutcome outcome(std::uint64_t bytes) const {
    TransferOutcome out;
    out.bytes = bytes;
    out.seconds = seconds();
    out.route = progress_.route;
    return out;
  }

 private:
  TransferControl& control_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_;
  TransferProgress progress_;
};

// A copy's deadline: the listing's time plus its bytes at the slowest rate expected.
milliseconds copy_timeout(const TransferRequest& request) {
  return kStorageTimeout + milliseconds(static_cast<std::int64_t>(
                               static_cast<double>(request.bytes_hint) / kSlowestCopyRate * 1e3));
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
      if (pod->phase == "Running" && !pod->deleting) {
        helper_running_ = true;
        return name;
      }
      if (pod->phase == "Succeeded" || pod->phase == "Failed" || pod->deleting) {
        // Past its lifetime, or its node went away: a new one.
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

Result<TransferOutcome> KubernetesSite::copy_out(const TransferRequest& request,
                                                 const std::string& local_path,
                                                 TransferControl& control) {
  if (auto ok = check_copy(request.from.path, local_path, request.directory, spec_.name); !ok) {
    return site_error(ok.error());
  }
  // tar -x here, fed by tar -c in the helper pod.
  const std::string into = request.directory ? local_path : parent_of(local_path);
  std::error_code ec;
  std::filesystem::create_directories(into, ec);
  if (ec) {
    return make_error(ErrorKind::io, "cannot create " + into + " here: " + ec.message());
  }
  auto tar = process::ChildProcess::spawn_with_stdin(
      {"tar", "-x", "-f", "-", "-C", into, "--no-same-owner"});
  if (!tar) return tar.error();
  CopyMeter meter(control, request, "tar through pods/exec from " + spec_.name);
  std::string local_err;
  std::string remote_err;
  bool local_failed = false;
  auto run = run_in_helper(
      tar_create(request.from.path, request.directory), nullptr,
      [&](int channel, std::string_view data) {
        if (channel == 2) {
          remote_err.append(data.substr(0, 4096));
          return true;
        }
        if (control.stop_requested()) return false;
        if (!tar->write_stdin(data)) {
          local_failed = true;
          return false;
        }
        meter.add(data.size());
        return true;
      },
      copy_timeout(request));
  tar->close_stdin();
  std::string out;
  while (!tar->output_closed()) tar->read_some(milliseconds(200), out, local_err);
  tar->wait_for(milliseconds(30000));
  if (control.stop_requested()) return make_error(ErrorKind::conflict, "stopped");
  // The source's failure first: a tar -c that failed leaves tar -x nothing to read.
  if (run && run->exit_code != 0) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": tar -c of " + request.from.path +
                                         " failed in the storage helper pod (exit " +
                                         std::to_string(run->exit_code) +
                                         "): " + storage::stderr_tail(remote_err));
  }
  if (!run && !local_failed) return run.error();
  if (local_failed || tar->exit().exit_code != 0) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": tar -x into " + into +
                                         " failed here: " + storage::stderr_tail(local_err));
  }
  return meter.outcome(meter.bytes_done());
}

Result<TransferOutcome> KubernetesSite::copy_in(const TransferRequest& request,
                                                const std::string& local_path,
                                                TransferControl& control) {
  if (auto ok = check_copy(local_path, request.to.path, request.directory, spec_.name); !ok) {
    return site_error(ok.error());
  }
  auto tar = process::ChildProcess::spawn(tar_create(local_path, request.directory));
  if (!tar) return tar.error();
  const std::string into = request.directory ? request.to.path : parent_of(request.to.path);
  CopyMeter meter(control, request, "tar through pods/exec to " + spec_.name);
  std::string local_err;
  bool stopped = false;
  auto run = run_in_helper(
      {"/bin/sh", "-c", "mkdir -p -- \"$1\" && exec tar -x -f - -C \"$1\" --no-same-owner", "sh",
       into},
      [&]() -> std::optional<std::string> {
        if (control.stop_requested()) {
          stopped = true;
          return std::nullopt;
        }
        std::string chunk;
        while (chunk.empty() && !tar->output_closed()) {
          std::string err;
          tar->read_some(milliseconds(200), chunk, err);
          local_err += err;
        }
        meter.add(chunk.size());
        return chunk;  // "" once tar -c is done: stdin is closed
      },
      nullptr, copy_timeout(request));
  // A copy that broke off leaves tar -c blocked on a full pipe: it goes.
  if (!run || stopped) tar->signal_group(SIGKILL);
  tar->wait_for(milliseconds(30000));
  if (stopped) return make_error(ErrorKind::conflict, "stopped");
  if (!run) return run.error();
  if (tar->exit().exit_code != 0) {
    return make_error(ErrorKind::io, "tar -c of " + local_path +
                                         " failed here: " + storage::stderr_tail(local_err));
  }
  if (run->exit_code != 0) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": tar -x into " + into +
                                         " failed in the storage helper pod (exit " +
                                         std::to_string(run->exit_code) +
                                         "): " + storage::stderr_tail(run->err));
  }
  return meter.outcome(run->bytes_in);
}

}  // namespace orch
