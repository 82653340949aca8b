// KubernetesSite's copies between its storage and this host (copy_out, copy_in): tar streams
// through pods/exec of the storage helper pod, paced to the transfer's cap, that resume from what
// arrived (issue 44, kube_copy_plan.h): both sides are listed, complete files are skipped (or
// compared by SHA-256 on a retry), partial files are continued from their size and hashed, and
// the rest travels as one tar stream of the files named.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>

#include "adapters/kubernetes/kube_copy_plan.h"
#include "adapters/kubernetes/kube_site.h"
#include "adapters/process/child_process.h"
#include "adapters/storage/local_storage.h"
#include "adapters/storage/storage_script.h"

namespace orch {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kListTimeout{60000};  // the listing part of a copy's deadline
constexpr double kSlowestCopyRate = 5e6;     // bytes/s: a copy's deadline grows with its size
constexpr std::size_t kChunk = 1 << 20;      // bytes read from a local file at a time

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A file of the copy: the root itself for a single file (path "").
std::string file_at(const std::string& root, const std::string& path) {
  return path.empty() ? root : root + "/" + path;
}

// Where a copy's tar runs (-C): the directory, or a single file's parent.
std::string tar_dir(const std::string& root, bool directory) {
  return directory ? root : parent_of(root);
}

// `tar -c` to stdout of a whole copy (names empty: a directory's contents, or one file under
// its own name), or of the files named NUL-separated on stdin (`list`: "-" or a file).
std::vector<std::string> tar_create(const std::string& root, bool directory,
                                    const std::string& list = "") {
  if (!list.empty()) {
    return {"tar",    "-c",           "-f", "-", "-C", tar_dir(root, directory),
            "--null", "--no-unquote", "-T", list};
  }
  return directory ? std::vector<std::string>{"tar", "-c", "-f", "-", "-C", root, "."}
                   : std::vector<std::string>{"tar",           "-c",         "-f", "-", "-C",
                                              parent_of(root), base_of(root)};
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

  // `done`: bytes found at the destination already (a resumed copy's progress starts there).
  void start_at(std::uint64_t done) { base_ = done; }

  void add(std::size_t bytes) {
    sent_ += bytes;
    progress_.bytes_done = base_ + sent_;
    const double cap = control_.cap_bytes_per_s();
    progress_.cap_bytes_per_s = cap;
    if (cap > 0) {
      const double should = static_cast<double>(sent_) / cap;
      if (should > seconds())
        std::this_thread::sleep_for(std::chrono::duration<double>(should - seconds()));
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < milliseconds(250)) return;
    last_ = now;
    progress_.rate_bytes_per_s = seconds() > 0 ? static_cast<double>(sent_) / seconds() : 0;
    progress_.percent = progress_.bytes_total > 0
                            ? static_cast<int>(std::min<std::uint64_t>(
                                  100, progress_.bytes_done * 100 / progress_.bytes_total))
                            : 0;
    control_.progress(progress_);
  }

  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }

  // The bytes this run sent (not those found there).
  TransferOutcome outcome() const {
    TransferOutcome out;
    out.bytes = sent_;
    out.seconds = seconds();
    out.route = progress_.route;
    return out;
  }

 private:
  TransferControl& control_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_;
  TransferProgress progress_;
  std::uint64_t base_ = 0;
  std::uint64_t sent_ = 0;
};

// A copy's deadline per stream: the listing's time plus its bytes at the slowest rate expected.
milliseconds copy_timeout(const TransferRequest& request) {
  return kListTimeout + milliseconds(static_cast<std::int64_t>(
                            static_cast<double>(request.bytes_hint) / kSlowestCopyRate * 1e3));
}

// An exec input that hands over `text` once, then ends stdin.
ExecInput once(std::string text) {
  auto sent = std::make_shared<bool>(false);
  return [text = std::move(text), sent]() -> std::optional<std::string> {
    if (*sent) return std::string();
    *sent = true;
    return text;
  };
}

}  // namespace

// One copy_out or copy_in: the site's side through the storage helper, this host's directly.
class KubeSiteCopy {
 public:
  KubeSiteCopy(KubernetesSite& site, const TransferRequest& request, std::string local,
               TransferControl& control, bool out)
      : site_(site),
        request_(request),
        control_(control),
        out_(out),
        remote_(out ? request.from.path : request.to.path),
        local_(std::move(local)),
        meter_(control, request,
               std::string("tar through pods/exec ") + (out ? "from " : "to ") + site.spec_.name) {}

  Result<TransferOutcome> run() {
    const std::string& from = out_ ? remote_ : local_;
    const std::string& to = out_ ? local_ : remote_;
    if (auto ok = check_copy(from, to, request_.directory, site_.spec_.name); !ok) {
      return site_.site_error(ok.error());
    }
    auto arrived = listing(to, !out_, {});
    if (!arrived && arrived.error().kind != ErrorKind::not_found) return arrived.error();
    if (!arrived) return send_all();
    auto source = listing(from, out_, {});
    if (!source) return source.error();
    kube::CopyPlan plan = kube::plan_copy(*source, *arrived, request_.checksum);
    if (plan.fresh) return send_all();
    meter_.start_at(plan.bytes_there);
    std::vector<std::string> hashed = plan.compare;
    for (const auto& t : plan.tails) hashed.push_back(t.path);
    Manifest source_hashes;
    if (!hashed.empty()) {
      auto s = listing(from, out_, hashed);
      if (!s) return s.error();
      source_hashes = std::move(*s);
    }
    std::vector<std::string> whole = plan.whole;
    if (!plan.compare.empty()) {
      auto d = listing(to, !out_, plan.compare);
      if (!d) return d.error();
      for (auto& f : kube::hash_mismatches(source_hashes, *d, plan.compare)) whole.push_back(f);
    }
    if (!whole.empty()) {
      if (auto sent = send_whole(whole); !sent) return sent.error();
    }
    if (plan.tails.empty()) return meter_.outcome();
    std::vector<std::string> continued;
    for (const auto& t : plan.tails) {
      if (auto sent = send_tail(t); !sent) return sent.error();
      continued.push_back(t.path);
    }
    // A continued file is only as good as its hash: one that differs is sent again whole.
    auto d = listing(to, !out_, continued);
    if (!d) return d.error();
    const auto bad = kube::hash_mismatches(source_hashes, *d, continued);
    if (!bad.empty()) {
      if (auto sent = send_whole(bad); !sent) return sent.error();
    }
    return meter_.outcome();
  }

 private:
  // The listing of `path` (on the site or here), hashing `hash` (none when empty).
  Result<Manifest> listing(const std::string& path, bool on_site,
                           const std::vector<std::string>& hash) {
    ManifestRequest r{
        path, hash.empty() ? ManifestRequest::Hash::none : ManifestRequest::Hash::listed, hash, {}};
    std::size_t names = 0;
    for (const auto& h : hash) names += h.size() + 8;
    if (names > storage::kMaxListedBytes) {
      r.hash = ManifestRequest::Hash::all;
      r.hash_files.clear();
    }
    if (on_site) return site_.manifest(r);
    auto m = storage::local_manifest(r);
    if (!m && m.error().kind != ErrorKind::not_found) {
      return make_error(m.error().kind, "listing " + path + " here to resume a copy with site " +
                                            site_.spec_.name + ": " + m.error().message);
    }
    return m;
  }

  // The copy's files named (`paths`; empty: all of it) as one tar stream.
  Result<void> send_whole(const std::vector<std::string>& paths) {
    const std::string list =
        paths.empty() ? "" : kube::tar_name_list(paths, base_of(out_ ? remote_ : local_));
    auto done = out_ ? tar_out(list) : tar_in(list);
    if (!done) return done.error();
    return Ok{};
  }
  // A copy with nothing at the destination yet: all of it, as one stream.
  Result<TransferOutcome> send_all() {
    if (auto sent = send_whole({}); !sent) return sent.error();
    return meter_.outcome();
  }

  Result<void> send_tail(const kube::CopyTail& tail) {
    return out_ ? tail_out(tail) : tail_in(tail);
  }

  // tar -x here, fed by tar -c in the helper pod.
  Result<void> tar_out(const std::string& list) {
    const std::string into = tar_dir(local_, request_.directory);
    std::error_code ec;
    std::filesystem::create_directories(into, ec);
    if (ec) return make_error(ErrorKind::io, "cannot create " + into + " here: " + ec.message());
    auto tar = process::ChildProcess::spawn_with_stdin(
        {"tar", "-x", "-f", "-", "-C", into, "--no-same-owner"});
    if (!tar) return tar.error();
    std::string local_err;
    std::string remote_err;
    bool local_failed = false;
    auto run = site_.run_in_helper(
        tar_create(remote_, request_.directory, list.empty() ? "" : "-"),
        list.empty() ? ExecInput() : once(list),
        [&](int channel, std::string_view data) {
          if (channel == 2) {
            remote_err.append(data.substr(0, 4096));
            return true;
          }
          if (control_.stop_requested()) return false;
          if (!tar->write_stdin(data)) {
            local_failed = true;
            return false;
          }
          meter_.add(data.size());
          return true;
        },
        copy_timeout(request_));
    tar->close_stdin();
    std::string out;
    while (!tar->output_closed()) tar->read_some(milliseconds(200), out, local_err);
    tar->wait_for(milliseconds(30000));
    if (control_.stop_requested()) return make_error(ErrorKind::conflict, "stopped");
    // The source's failure first: a tar -c that failed leaves tar -x nothing to read.
    if (run && run->exit_code != 0) return remote_failed("tar -c of " + remote_, *run, remote_err);
    if (!run && !local_failed) return run.error();
    if (local_failed || tar->exit().exit_code != 0) {
      return make_error(ErrorKind::io, "site " + site_.spec_.name + ": tar -x into " + into +
                                           " failed here: " + storage::stderr_tail(local_err));
    }
    return Ok{};
  }

  // tar -c here (of the files in a list file when some are named), into tar -x in the pod.
  Result<void> tar_in(const std::string& list) {
    std::string list_file;
    if (!list.empty()) {
      auto made = write_list(list);
      if (!made) return made.error();
      list_file = *made;
    }
    struct Removed {
      const std::string& path;
      ~Removed() {
        if (!path.empty()) std::remove(path.c_str());
      }
    } removed{list_file};
    auto tar = process::ChildProcess::spawn(tar_create(local_, request_.directory, list_file));
    if (!tar) return tar.error();
    const std::string into = tar_dir(remote_, request_.directory);
    std::string local_err;
    bool stopped = false;
    auto run = site_.run_in_helper(
        {"/bin/sh", "-c", "mkdir -p -- \"$1\" && exec tar -x -f - -C \"$1\" --no-same-owner", "sh",
         into},
        [&]() -> std::optional<std::string> {
          if (control_.stop_requested()) {
            stopped = true;
            return std::nullopt;
          }
          std::string chunk;
          while (chunk.empty() && !tar->output_closed()) {
            std::string err;
            tar->read_some(milliseconds(200), chunk, err);
            local_err += err;
          }
          meter_.add(chunk.size());
          return chunk;  // "" once tar -c is done: stdin is closed
        },
        nullptr, copy_timeout(request_));
    // A copy that broke off leaves tar -c blocked on a full pipe: it goes.
    if (!run || stopped) tar->signal_group(SIGKILL);
    tar->wait_for(milliseconds(30000));
    if (stopped) return make_error(ErrorKind::conflict, "stopped");
    if (!run) return run.error();
    if (tar->exit().exit_code != 0) {
      return make_error(ErrorKind::io,
                        "tar -c of " + local_ + " failed here: " + storage::stderr_tail(local_err));
    }
    if (run->exit_code != 0) return remote_failed("tar -x into " + into, *run, run->err);
    return Ok{};
  }

  // The rest of a partial file here: `tail -c +N` in the pod, appended to what arrived.
  Result<void> tail_out(const kube::CopyTail& tail) {
    const std::string path = file_at(local_, tail.path);
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) != tail.from) {
      if (fd >= 0) ::close(fd);
      return make_error(ErrorKind::io, "site " + site_.spec_.name + ": " + path +
                                           " changed here while its copy resumed; retry");
    }
    int failed = 0;  // errno of a failed write
    std::string remote_err;
    auto run = site_.run_in_helper(
        {"tail", "-c", "+" + std::to_string(tail.from + 1), "--", file_at(remote_, tail.path)},
        nullptr,
        [&](int channel, std::string_view data) {
          if (channel == 2) {
            remote_err.append(data.substr(0, 4096));
            return true;
          }
          if (control_.stop_requested()) return false;
          while (!data.empty()) {
            const ssize_t n = ::write(fd, data.data(), data.size());
            if (n <= 0) {
              failed = errno;
              return false;
            }
            meter_.add(static_cast<std::size_t>(n));
            data.remove_prefix(static_cast<std::size_t>(n));
          }
          return true;
        },
        copy_timeout(request_));
    if (::close(fd) != 0 && failed == 0) failed = errno;
    if (control_.stop_requested()) return make_error(ErrorKind::conflict, "stopped");
    if (run && run->exit_code != 0) {
      return remote_failed("tail -c of " + file_at(remote_, tail.path), *run, remote_err);
    }
    if (failed != 0) {
      return make_error(ErrorKind::io, "site " + site_.spec_.name + ": cannot append to " + path +
                                           " here: " + std::strerror(failed));
    }
    if (!run) return run.error();
    return Ok{};
  }

  // The rest of a partial file in the pod: read here from its size, appended there by `cat`.
  Result<void> tail_in(const kube::CopyTail& tail) {
    const std::string path = file_at(local_, tail.path);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::lseek(fd, static_cast<off_t>(tail.from), SEEK_SET) < 0) {
      if (fd >= 0) ::close(fd);
      return make_error(ErrorKind::io, "cannot read " + path + " here: " + std::strerror(errno));
    }
    bool stopped = false;
    bool unread = false;
    auto run = site_.run_in_helper(
        {"/bin/sh", "-c", "exec cat >> \"$1\"", "sh", file_at(remote_, tail.path)},
        [&]() -> std::optional<std::string> {
          if (control_.stop_requested()) {
            stopped = true;
            return std::nullopt;
          }
          std::string chunk(kChunk, '\0');
          const ssize_t n = ::read(fd, chunk.data(), chunk.size());
          if (n < 0) {
            unread = true;
            return std::nullopt;
          }
          chunk.resize(static_cast<std::size_t>(n));
          meter_.add(chunk.size());
          return chunk;
        },
        nullptr, copy_timeout(request_));
    ::close(fd);
    if (stopped) return make_error(ErrorKind::conflict, "stopped");
    if (unread) return make_error(ErrorKind::io, "cannot read " + path + " here");
    if (!run) return run.error();
    if (run->exit_code != 0)
      return remote_failed("appending to " + file_at(remote_, tail.path), *run, run->err);
    return Ok{};
  }

  Error remote_failed(const std::string& what, const KubernetesSite::HelperRun& run,
                      const std::string& err) const {
    return make_error(ErrorKind::io, "site " + site_.spec_.name + ": " + what +
                                         " failed in the storage helper pod (exit " +
                                         std::to_string(run.exit_code) +
                                         "): " + storage::stderr_tail(err));
  }

  // The names for a local tar's -T, in a file of their own (tar reads them as it goes).
  static Result<std::string> write_list(const std::string& list) {
    std::string path = (std::filesystem::temp_directory_path() / "orch-copy-XXXXXX").string();
    const int fd = ::mkstemp(path.data());
    if (fd < 0) return make_error(ErrorKind::io, "cannot make a temporary file here");
    const bool ok = ::write(fd, list.data(), list.size()) == static_cast<ssize_t>(list.size());
    ::close(fd);
    if (!ok) {
      std::remove(path.c_str());
      return make_error(ErrorKind::io, "cannot write the list of files to copy here");
    }
    return path;
  }

  KubernetesSite& site_;
  const TransferRequest& request_;
  TransferControl& control_;
  const bool out_;
  const std::string remote_;
  const std::string local_;
  CopyMeter meter_;
};

Result<TransferOutcome> KubernetesSite::copy_out(const TransferRequest& request,
                                                 const std::string& local_path,
                                                 TransferControl& control) {
  return KubeSiteCopy(*this, request, local_path, control, true).run();
}

Result<TransferOutcome> KubernetesSite::copy_in(const TransferRequest& request,
                                                const std::string& local_path,
                                                TransferControl& control) {
  return KubeSiteCopy(*this, request, local_path, control, false).run();
}

}  // namespace orch
