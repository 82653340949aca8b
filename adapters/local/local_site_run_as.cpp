// LocalSite with local.run_as (docs/security.md, "The host"): before a launch's tasks start, the
// job's user gets its working directory and its checkpoint directory, may search the
// directories that lead to them and to what it resumes from and reads (never list or read
// them), and a child process that has become that user checks it can reach all of it, so a
// launch that could not work fails now, saying which directory stands in the way.
//
// What stays the server's: the run directory itself (0700 plus search: the job cannot list it,
// or create, remove or replace the control files in it) and every control file (0600), the
// site's other directories and everything of the state directory.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "adapters/local/local_site.h"
#include "adapters/local/run_as.h"
#include "scheduler/model/launch_limits.h"

namespace orch {
namespace {

namespace fs = std::filesystem;

Error site_error(const std::string& site, const Error& e) {
  return make_error(e.kind, "site " + site + ": " + e.message);
}

bool exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

bool below(const std::string& base, const std::string& path) {
  const fs::path rel =
      fs::path(path).lexically_normal().lexically_relative(fs::path(base).lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

// The job's code and setup (issue 40, scheduler/model/workdir.h): the job's user extracts the
// archive and runs the setup, so <root>/code and <root>/setup are its own (0700, searchable down
// to them) and so is the archive staging put there (opened without following a link).
Result<void> give_code_to(const std::string& root, const LaunchRequest& r,
                          const local::RunAsUser& user) {
  std::vector<std::string> dirs;
  if (!r.code_archive.empty()) dirs.push_back(fs::path(r.code_archive).parent_path().string());
  if (!r.setup_dir.empty()) dirs.push_back(fs::path(r.setup_dir).parent_path().string());
  for (const std::string& dir : dirs) {
    if (!below(root, dir)) continue;
    if (auto made = local::make_dirs(dir, 0700); !made) return made;
    if (auto opened = local::allow_search_down_to(root, dir); !opened) return opened;
    if (auto given = local::give_dir_to(root, dir, user); !given) return given;
  }
  if (r.code_archive.empty() || !below(root, r.code_archive)) return Ok{};
  const int fd = ::open(r.code_archive.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Ok{};  // not there: the extraction says so, in the job's log
  const bool given = ::fchown(fd, user.uid, user.gid) == 0;
  ::close(fd);
  if (!given) {
    return make_error(ErrorKind::io, "cannot give the code archive " + r.code_archive + " to " +
                                         user.name + ": " + std::strerror(errno));
  }
  return Ok{};
}

}  // namespace

std::string LocalSite::checkpoints_dir() const {
  return options_.checkpoints_dir.empty() ? options_.root + "/checkpoints"
                                          : options_.checkpoints_dir;
}

std::string LocalSite::datasets_dir() const {
  return options_.datasets_dir.empty() ? options_.root + "/datasets" : options_.datasets_dir;
}

Result<void> LocalSite::prepare_storage() {
  if (options_.run_as.empty()) return Ok{};
  // Searchable (directories this process makes get 0701; those it owns already get o+x), so
  // that the user can go through them without listing them.
  for (const std::string& dir :
       {local::runs_dir(options_.root), checkpoints_dir(), datasets_dir()}) {
    if (auto made = local::make_dirs(dir, 0701); !made) {
      return site_error(options_.name, made.error());
    }
    local::allow_search(dir);
  }
  local::allow_search(options_.root);
  return Ok{};
}

Result<void> LocalSite::prepare_for_job_user(const LaunchRequest& request,
                                             const local::RunPaths& paths) {
  if (options_.run_as.empty()) return Ok{};
  auto user = local::resolve_run_as(options_.run_as);
  if (!user) return site_error(options_.name, user.error());
  if (auto ready = prepare_storage(); !ready) return ready.error();
  std::vector<local::PathNeed> needs = {{paths.work, local::Need::write, "its run directory"}};
  if (auto opened = local::allow_search_down_to(options_.root, paths.work); !opened) {
    return site_error(options_.name, opened.error());
  }
  if (auto given = local::give_dir_to(options_.root, paths.work, *user); !given) {
    return site_error(options_.name, given.error());
  }
  if (auto code = give_code_to(options_.root, request, *user); !code) {
    return site_error(options_.name, code.error());
  }
  if (!request.checkpoint_dir.empty()) {
    // Every directory from the cluster's checkpoint root down to the job's (job-<id>, and the
    // subdirectory its spec names) is the job's own.
    const std::string base = below(checkpoints_dir(), request.checkpoint_dir)
                                 ? checkpoints_dir()
                                 : fs::path(request.checkpoint_dir).parent_path().string();
    (void)local::allow_search_down_to(base, request.checkpoint_dir);
    fs::path dir = base;
    for (const fs::path& part :
         fs::path(request.checkpoint_dir).lexically_normal().lexically_relative(base)) {
      dir /= part;
      if (auto given = local::give_dir_to(base, dir.string(), *user); !given) {
        return site_error(options_.name, given.error());
      }
    }
    needs.push_back({request.checkpoint_dir, local::Need::write, "its checkpoint directory"});
  }
  // What it resumes from and the datasets it reads: searchable down to them where the site's
  // own directories lead there. Their files keep their owner and modes (a copy keeps those of
  // its source: the job user's own checkpoints stay readable by it).
  // One that is missing is left for the job to find missing, as without run_as.
  for (const auto& [name, value] : request.env) {
    const bool resume = name == request.resume_env;
    if (!resume && name.rfind(limits::kReservedEnvPrefix, 0) != 0) continue;
    if (!exists(value)) continue;
    for (const std::string& base : {checkpoints_dir(), datasets_dir()}) {
      if (below(base, value)) (void)local::allow_search_down_to(base, value);
    }
    needs.push_back(
        {value, local::Need::read, resume ? "the checkpoint it resumes from" : "dataset " + name});
  }
  if (auto reach = local::check_user_reaches(*user, needs); !reach) {
    return site_error(options_.name, reach.error());
  }
  return Ok{};
}

}  // namespace orch
