// See local_run_as.h.
#include "server/local_run_as.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "adapters/local/run_as.h"

namespace orch {
namespace {

namespace fs = std::filesystem;

// Whether `path` lies below `base`, both made absolute (the state directory may be given
// relative to the working directory).
bool below(const std::string& base, const std::string& path) {
  std::error_code ec;
  const fs::path b = fs::absolute(base, ec).lexically_normal();
  const fs::path rel = fs::absolute(path, ec).lexically_normal().lexically_relative(b);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

Result<void> check_local_run_as(const std::vector<ClusterSpec>& clusters) {
  for (const ClusterSpec& c : clusters) {
    if (c.provider != "local") continue;
    if (c.local.run_as.empty()) {
      if (geteuid() != 0) continue;  // as before: the jobs run as this (unprivileged) user
      return make_error(ErrorKind::invalid,
                        "cluster \"" + c.name +
                            "\": this server runs as root, and a local cluster would run its "
                            "jobs as root too (able to read the admin token and the server's "
                            "environment); set `local: {run_as: orchestrate-job}` on it (`make "
                            "deps` creates that user), or run the server as an unprivileged user");
    }
    if (auto user = local::resolve_run_as(c.local.run_as); !user) {
      return make_error(ErrorKind::invalid, "cluster \"" + c.name + "\": " + user.error().message);
    }
  }
  return Ok{};
}

mode_t state_dir_mode(const std::vector<ClusterSpec>& clusters, const std::string& state_dir) {
  for (const ClusterSpec& c : clusters) {
    if (c.provider != "local" || c.local.run_as.empty()) continue;
    if (c.storage_root.empty()) return 0701;  // <state>/sites/<name>
    for (const std::string& dir : {c.storage_root, c.checkpoints_dir(), c.datasets_dir()}) {
      if (below(state_dir, dir)) return 0701;
    }
  }
  return 0700;
}

Result<void> open_state_dir_to_jobs(const std::vector<ClusterSpec>& clusters,
                                    const std::string& state_dir) {
  const std::string sites = state_dir + "/sites";
  if (state_dir_mode(clusters, state_dir) == 0700) return Ok{};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(state_dir, ec)) {
    const std::string path = entry.path().string();
    struct stat st {};
    if (path == sites || lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
    if (st.st_uid == geteuid() && (st.st_mode & 077) != 0) {
      (void)::chmod(path.c_str(), st.st_mode & 07700);
    }
  }
  if (ec) return make_error(ErrorKind::io, "cannot list " + state_dir + ": " + ec.message());
  if (::chmod(state_dir.c_str(), 0701) != 0) {
    return make_error(ErrorKind::io, "cannot let the job user search the state directory " +
                                         state_dir + ": " + std::strerror(errno));
  }
  if (auto made = local::make_dirs(sites, 0701); !made) return made.error();
  if (::chmod(sites.c_str(), 0701) != 0) {  // one an earlier start made owner-only
    return make_error(ErrorKind::io,
                      "cannot let the job user search " + sites + ": " + std::strerror(errno));
  }
  return Ok{};
}

}  // namespace orch
