#pragma once
// local.run_as on the server's side (docs/security.md, "The host"): the user a local site's
// jobs run as, and what that user must reach. The agent stays the server's user (it holds the
// lock and writes the event file) and switches only the job's process (`orchestrate-agent run
// --run-as`). The control files of a run stay the server's alone; the user gets its working
// directory and its checkpoint directory, and may search (never list or read) the directories
// that lead there.

#include <sys/types.h>

#include <string>
#include <vector>

#include "scheduler/common/result.h"

namespace orch::local {

struct RunAsUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // its supplementary groups, the primary one included
};

// local.run_as looked up (getpwnam, getgrouplist). ErrorKind::invalid, saying what to do, when
// this process is not root (it cannot switch users), there is no such user, or it is root.
Result<RunAsUser> resolve_run_as(const std::string& name);

// mkdir -p, each directory it makes having exactly `mode` (not narrowed by the umask); those
// that exist are left as they are.
Result<void> make_dirs(const std::string& path, mode_t mode);

// Lets others search `dir` (adds o+x, never read) when this process owns it; nothing when it
// does not exist.
void allow_search(const std::string& dir);

// Lets others search `base` and each directory below it on the way to `path` (path itself
// excluded): adds o+x, never read, to those this process owns, and stops at the first it does
// not own (the job user's own, or someone else's). Each is opened without following a symbolic
// link, so a link swapped in cannot redirect the change. Nothing when path is not below base.
Result<void> allow_search_down_to(const std::string& base, const std::string& path);

// Gives the directory `dir` (at or below `base`) to the user: owner uid:gid, mode 0700. Opened
// component by component below base without following symbolic links.
Result<void> give_dir_to(const std::string& base, const std::string& dir, const RunAsUser& user);

// What the job's user must be able to do with a path.
enum class Need {
  read,   // read a file, or list and read a directory
  write,  // create and remove in a directory
};
struct PathNeed {
  std::string path;
  Need need = Need::read;
  std::string what;  // "its run directory", "dataset imagenet", ...
};

// Checks, in a child process that has become the user, that it can search every directory above
// each path and use the path as needed. The first it cannot is ErrorKind::invalid naming the
// directory, the errno text and what to change.
Result<void> check_user_reaches(const RunAsUser& user, const std::vector<PathNeed>& needs);

}  // namespace orch::local
