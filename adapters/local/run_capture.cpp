#include "adapters/local/run_capture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

extern char** environ;

namespace orch::local {
namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1000));
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

std::string format_arg(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(value);
}

Result<CapturedRun> run_captured(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout, std::size_t max_output) {
  if (argv.empty()) return make_error(ErrorKind::invalid, "run_captured: no command");
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    for (int fd : {out[0], out[1], err[0], err[1]}) {
      if (fd >= 0) close(fd);
    }
    return make_error(ErrorKind::io, std::string("cannot create pipes: ") + std::strerror(e));
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  // The server's other descriptors (sockets, locks) are none of the helper's business.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so the deadline's SIGKILL reaches whatever it started; signals
  // back to their defaults and none blocked, as a fresh process expects.
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
  int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close_fd(out[1]);
  close_fd(err[1]);
  if (rc != 0) {
    close_fd(out[0]);
    close_fd(err[0]);
    return make_error(ErrorKind::io, "cannot run " + argv[0] + ": " + std::strerror(rc));
  }

  CapturedRun run;
  const auto deadline = Clock::now() + timeout;
  int fds[2] = {out[0], err[0]};
  std::string* into[2] = {&run.out, &run.err};
  char buf[8192];
  // Read until both pipes close (the helper and everything it started are gone) or the deadline.
  while (fds[0] >= 0 || fds[1] >= 0) {
    if (Clock::now() >= deadline) {
      run.timed_out = true;
      kill(-pid, SIGKILL);
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
    int ready = poll(p, n, remaining_ms(deadline));
    if (ready < 0 && errno != EINTR) break;
    for (nfds_t k = 0; ready > 0 && k < n; ++k) {
      if (p[k].revents == 0) continue;
      int i = which[k];
      ssize_t r = read(fds[i], buf, sizeof buf);
      if (r > 0) {
        std::size_t room = max_output - std::min(max_output, into[i]->size());
        into[i]->append(buf, std::min(room, static_cast<std::size_t>(r)));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        close_fd(fds[i]);
      }
    }
  }
  close_fd(fds[0]);
  close_fd(fds[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  return run;
}

}  // namespace orch::local
