#include "agents/node_local_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "scheduler/model/checkpoint_dir.h"

namespace orch::agent {
namespace {

// mkdir of each missing component of an absolute path: the parents it makes 0711 (the job's
// user passes through, lists nothing), the last `mode`, whatever the umask (the server's is 077).
bool make_dirs(const std::string& path, mode_t mode, std::string* error) {
  for (std::size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    const bool last = at == std::string::npos;
    const std::string part = last ? path : path.substr(0, at);
    const mode_t want = last ? mode : 0711;
    if (mkdir(part.c_str(), want) == 0) {
      if (chmod(part.c_str(), want) != 0) {
        *error = "cannot set the mode of " + part + ": " + std::strerror(errno);
        return false;
      }
    } else if (errno != EEXIST) {
      *error = "cannot create " + part + ": " + std::strerror(errno);
      return false;
    }
    if (last) return true;
  }
}

}  // namespace

bool prepare_node_local_dir(const std::string& node, const JobUser* user, std::string* error) {
  const char* given = std::getenv("ORCH_LOCAL_CHECKPOINT_DIR");
  if (given == nullptr || *given == '\0') return true;
  auto expanded = expand_node_placeholder(given, node);
  if (!expanded) {
    *error = "ORCH_LOCAL_CHECKPOINT_DIR: " + expanded.error().message;
    return false;
  }
  auto dir = normal_absolute_path(*expanded);
  if (!dir) {
    *error = "ORCH_LOCAL_CHECKPOINT_DIR '" + *expanded + "': " + dir.error().message;
    return false;
  }
  if (!make_dirs(*dir, 0700, error)) return false;
  struct stat st {};
  if (lstat(dir->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *error = "the node's checkpoint directory " + *dir + " is a symbolic link or not a directory";
    return false;
  }
  if (user != nullptr && st.st_uid != user->uid &&
      lchown(dir->c_str(), user->uid, user->gid) != 0) {
    *error = "cannot give " + *dir + " to " + user->name + ": " + std::strerror(errno);
    return false;
  }
  setenv("ORCH_LOCAL_CHECKPOINT_DIR", dir->c_str(), 1);
  return true;
}

}  // namespace orch::agent
