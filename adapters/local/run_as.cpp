// See run_as.h.
#include "adapters/local/run_as.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>

namespace orch::local {
namespace {

namespace fs = std::filesystem;

std::string errno_string(int err) {
  return std::strerror(err);
}

Result<void> io_error(const std::string& what, int err) {
  return make_error(ErrorKind::io, what + ": " + errno_string(err));
}

// The components of `path` below `base` (both made lexically normal); nullopt when path is not
// at or below base.
std::optional<std::vector<std::string>> components_below(const std::string& base,
                                                         const std::string& path) {
  const fs::path b = fs::path(base).lexically_normal();
  const fs::path rel = fs::path(path).lexically_normal().lexically_relative(b);
  if (rel.empty() || *rel.begin() == "..") return std::nullopt;
  std::vector<std::string> out;
  for (const fs::path& part : rel) {
    if (part != "." && !part.empty()) out.push_back(part.string());
  }
  return out;
}

// A file descriptor closed on scope exit.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
  void reset(int f) {
    if (fd >= 0) close(fd);
    fd = f;
  }
};

int open_dir(int at, const std::string& name, bool follow) {
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  return at < 0 ? open(name.c_str(), flags) : openat(at, name.c_str(), flags);
}

// o+x on an open directory this process owns; true when the walk may go on below it.
bool allow_search_fd(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) return false;
  if ((st.st_mode & S_IXOTH) == 0) (void)fchmod(fd, (st.st_mode & 07777) | S_IXOTH);
  return true;
}

}  // namespace

Result<RunAsUser> resolve_run_as(const std::string& name) {
  const std::string where = "local.run_as " + name + ": ";
  if (geteuid() != 0) {
    return make_error(ErrorKind::invalid,
                      where + "this server runs as uid " + std::to_string(geteuid()) +
                          ", not root, so it cannot start jobs as another user; run it as "
                          "root, or remove run_as (jobs then run as the server's own user)");
  }
  std::vector<char> buf(1 << 16);
  passwd pw{};
  passwd* found = nullptr;
  const int rc = getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
  if (found == nullptr) {
    return make_error(ErrorKind::invalid,
                      where + "no such user on this machine" +
                          (rc != 0 ? " (" + errno_string(rc) + ")" : std::string()) +
                          "; create it (as root, `make deps` creates orchestrate-job) or name "
                          "another");
  }
  if (pw.pw_uid == 0) {
    return make_error(ErrorKind::invalid, where +
                                              "that user is root (uid 0), so jobs would run as "
                                              "root; name an unprivileged user such as "
                                              "orchestrate-job");
  }
  RunAsUser user{name, pw.pw_uid, pw.pw_gid, {}};
  int count = 32;
  for (int tries = 0; tries < 8; ++tries) {
    user.groups.assign(static_cast<std::size_t>(count), 0);
    const int want = count;
    if (getgrouplist(name.c_str(), pw.pw_gid, user.groups.data(), &count) >= 0) {
      user.groups.resize(static_cast<std::size_t>(count));
      return user;
    }
    if (count <= want) count = want * 2;
  }
  return make_error(ErrorKind::invalid, where + "cannot list the user's groups");
}

Result<void> make_dirs(const std::string& path, mode_t mode) {
  fs::path so_far;
  for (const fs::path& part : fs::path(path).lexically_normal()) {
    so_far /= part;
    if (part.empty() || part == "/") continue;
    if (mkdir(so_far.c_str(), mode) == 0) {
      if (chmod(so_far.c_str(), mode) != 0)
        return io_error("cannot set the mode of " + so_far.string(), errno);
    } else if (errno != EEXIST) {
      return io_error("cannot create " + so_far.string(), errno);
    }
  }
  return Ok{};
}

void allow_search(const std::string& dir) {
  Fd fd(open_dir(-1, dir, true));
  if (fd.fd >= 0) (void)allow_search_fd(fd.fd);
}

Result<void> allow_search_down_to(const std::string& base, const std::string& path) {
  auto parts = components_below(base, path);
  if (!parts || parts->empty()) return Ok{};
  parts->pop_back();  // the path itself is given (or checked) separately
  Fd dir(open_dir(-1, base, true));
  if (dir.fd < 0) return Ok{};  // missing: the reachability check says so
  if (!allow_search_fd(dir.fd)) return Ok{};
  for (const std::string& part : *parts) {
    dir.reset(open_dir(dir.fd, part, false));
    if (dir.fd < 0 || !allow_search_fd(dir.fd)) return Ok{};
  }
  return Ok{};
}

Result<void> give_dir_to(const std::string& base, const std::string& dir, const RunAsUser& user) {
  auto parts = components_below(base, dir);
  if (!parts) {
    return make_error(ErrorKind::internal, dir + " is not inside " + base);
  }
  Fd fd(open_dir(-1, base, true));
  for (const std::string& part : *parts) {
    if (fd.fd < 0) break;
    fd.reset(open_dir(fd.fd, part, false));
  }
  if (fd.fd < 0) {
    return io_error("cannot open " + dir + " (without following links) to give it to " + user.name,
                    errno);
  }
  if (fchown(fd.fd, user.uid, user.gid) != 0 || fchmod(fd.fd, 0700) != 0) {
    return io_error("cannot give " + dir + " to " + user.name, errno);
  }
  return Ok{};
}

namespace {

// One access(2) check the child makes: a path, the mode, and which need it serves.
struct Probe {
  std::string path;
  int mode = 0;
  std::size_t need = 0;
  bool last = false;  // the path itself, not a directory on the way to it
};

std::vector<Probe> probes_for(const std::vector<PathNeed>& needs) {
  std::vector<Probe> out;
  for (std::size_t i = 0; i < needs.size(); ++i) {
    const fs::path p = fs::path(needs[i].path).lexically_normal();
    fs::path so_far;
    for (auto it = p.begin(); it != p.end(); ++it) {
      so_far /= *it;
      if (std::next(it) == p.end()) break;
      out.push_back({so_far.string(), X_OK, i, false});
    }
    struct stat st {};
    const bool is_dir = stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    int mode = needs[i].need == Need::write ? (R_OK | W_OK | X_OK) : R_OK;
    if (is_dir) mode |= R_OK | X_OK;
    out.push_back({p.string(), mode, i, true});
  }
  return out;
}

// In the forked child: become the user and try each probe; report the first failure (its index
// and errno) on fd. Only async-signal-safe calls.
[[noreturn]] void probe_as(const RunAsUser& user, const std::vector<Probe>& probes, int fd) {
  std::int32_t record[2] = {-1, 0};
  if (setgroups(user.groups.size(), user.groups.data()) != 0 ||
      setresgid(user.gid, user.gid, user.gid) != 0 ||
      setresuid(user.uid, user.uid, user.uid) != 0) {
    record[1] = errno;
    (void)!write(fd, record, sizeof record);
    _exit(1);
  }
  for (std::size_t i = 0; i < probes.size(); ++i) {
    if (access(probes[i].path.c_str(), probes[i].mode) != 0) {
      record[0] = static_cast<std::int32_t>(i);
      record[1] = errno;
      (void)!write(fd, record, sizeof record);
      _exit(1);
    }
  }
  _exit(0);
}

std::string failure_text(const RunAsUser& user, const PathNeed& need, const Probe& p, int err) {
  const std::string who = "the job's user " + user.name;
  if (!p.last) {
    return who + " cannot search " + p.path + " (" + errno_string(err) + "), on the way to " +
           need.what + " " + need.path + ": let it search that directory (chmod o+x " + p.path +
           ", which lets no one list it) or keep the site's storage elsewhere";
  }
  const char* verb = need.need == Need::write ? "write to" : "read";
  return who + " cannot " + verb + " " + need.what + " " + need.path + " (" + errno_string(err) +
         ")" + (need.need == Need::read ? ": make it readable by " + user.name : std::string());
}

}  // namespace

Result<void> check_user_reaches(const RunAsUser& user, const std::vector<PathNeed>& needs) {
  const std::vector<Probe> probes = probes_for(needs);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return io_error("cannot create a pipe", errno);
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    return io_error("cannot fork to check what " + user.name + " can reach", err);
  }
  if (pid == 0) {
    close(fds[0]);
    probe_as(user, probes, fds[1]);
  }
  close(fds[1]);
  std::int32_t record[2] = {-2, 0};
  std::size_t have = 0;
  while (have < sizeof record) {
    const ssize_t n = read(fds[0], reinterpret_cast<char*>(record) + have, sizeof record - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += static_cast<std::size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (have == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return Ok{};
  if (have == sizeof record && record[0] >= 0 &&
      static_cast<std::size_t>(record[0]) < probes.size()) {
    const Probe& p = probes[static_cast<std::size_t>(record[0])];
    return make_error(ErrorKind::invalid, failure_text(user, needs[p.need], p, record[1]));
  }
  return make_error(ErrorKind::internal,
                    "cannot become " + user.name + " to check what it can reach" +
                        (have == sizeof record ? ": " + errno_string(record[1]) : std::string()));
}

}  // namespace orch::local
