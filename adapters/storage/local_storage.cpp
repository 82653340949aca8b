#include "adapters/storage/local_storage.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "adapters/storage/storage_script.h"

extern char** environ;

namespace orch::storage {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxErr = std::size_t{64} * 1024;

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

int poll_ms(Clock::time_point deadline) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1000));
}

std::string seconds(std::chrono::milliseconds t) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(t).count()) + " s";
}

}  // namespace

Result<ScriptRun> run_shell_script(const std::string& script, std::chrono::milliseconds timeout,
                                   std::size_t max_output) {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    for (int* fd : {&out[0], &out[1], &err[0], &err[1]}) close_fd(*fd);
    return make_error(ErrorKind::io, std::string("cannot create pipes: ") + std::strerror(e));
  }
  std::string sh = "/bin/sh";
  std::string dash_c = "-c";
  std::string body = script;
  char* argv[] = {sh.data(), dash_c.data(), body.data(), nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so the deadline's SIGKILL reaches find and sha256sum too; signals
  // back to their defaults and none blocked.
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close_fd(out[1]);
  close_fd(err[1]);
  if (rc != 0) {
    close_fd(out[0]);
    close_fd(err[0]);
    return make_error(ErrorKind::io, std::string("cannot run /bin/sh: ") + std::strerror(rc));
  }

  ScriptRun run;
  const auto deadline = Clock::now() + timeout;
  int fds[2] = {out[0], err[0]};
  bool timed_out = false;
  bool overflow = false;
  char buf[65536];
  while (fds[0] >= 0 || fds[1] >= 0) {
    if (Clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    pollfd p[2];
    int which[2];
    nfds_t n = 0;
    for (int i = 0; i < 2; ++i) {
      if (fds[i] >= 0) {
        p[n] = {fds[i], POLLIN, 0};
        which[n++] = i;
      }
    }
    int ready = poll(p, n, poll_ms(deadline));
    if (ready < 0 && errno != EINTR) break;
    for (nfds_t k = 0; ready > 0 && k < n; ++k) {
      if (p[k].revents == 0) continue;
      int i = which[k];
      ssize_t r = read(fds[i], buf, sizeof buf);
      if (r > 0) {
        if (i == 0) {
          run.out.append(buf, static_cast<std::size_t>(r));
          if (run.out.size() > max_output) overflow = true;
        } else {
          run.err.append(buf, static_cast<std::size_t>(r));
          if (run.err.size() > 2 * kMaxErr) run.err.erase(0, run.err.size() - kMaxErr);
        }
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        close_fd(fds[i]);
      }
    }
    if (overflow) break;
  }
  if (timed_out || overflow) kill(-pid, SIGKILL);
  close_fd(fds[0]);
  close_fd(fds[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return make_error(ErrorKind::io, "the storage script ran past its deadline of " +
                                         seconds(timeout) + " and was killed");
  }
  if (overflow) {
    return make_error(ErrorKind::io, "the storage script printed more than " +
                                         std::to_string(max_output >> 20) + " MiB and was killed");
  }
  if (run.err.size() > kMaxErr) run.err.erase(0, run.err.size() - kMaxErr);
  if (WIFEXITED(status)) {
    run.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    if (!run.err.empty() && run.err.back() != '\n') run.err += '\n';
    run.err +=
        "orchestrate: storage script killed by signal " + std::to_string(WTERMSIG(status)) + "\n";
  }
  return run;
}

Result<Manifest> local_manifest(const ManifestRequest& request, std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) {
    timeout = request.hash == ManifestRequest::Hash::none ? kLocalListTimeout : kLocalHashTimeout;
  }
  auto script = manifest_script(request);
  if (!script) return script.error();
  auto run = run_shell_script(*script, timeout);
  if (!run) {
    return make_error(run.error().kind, "cannot list " + request.path + ": " + run.error().message);
  }
  return parse_manifest_output(run->out, run->err, run->exit_status, request.path);
}

Result<void> local_remove(const std::string& path, std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) timeout = kLocalHashTimeout;
  auto script = remove_script(path);
  if (!script) return script.error();
  auto run = run_shell_script(*script, timeout);
  if (!run) {
    return make_error(run.error().kind, "cannot delete " + path + ": " + run.error().message);
  }
  return check_remove_output(run->err, run->exit_status, path);
}

}  // namespace orch::storage
