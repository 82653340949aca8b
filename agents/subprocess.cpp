// See subprocess.h.
#include "agents/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "agents/agent_clock.h"

namespace orch::agent {
namespace {

constexpr size_t kMaxOut = 1 << 20;
constexpr size_t kMaxErr = 64 << 10;

// Reads what is there; false at end of file or on error.
bool drain(int fd, std::string* into, size_t cap) {
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      size_t room = into->size() < cap ? cap - into->size() : 0;
      into->append(buf, std::min(room, static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    return false;
  }
}

// In a forked child: makes fd the descriptor `target`, open across exec. dup2 onto itself would
// leave close-on-exec set, so that case clears the flag instead.
void place_fd(int fd, int target) {
  if (fd == target) {
    fcntl(fd, F_SETFD, 0);
  } else {
    dup2(fd, target);
  }
}

}  // namespace

CapturedRun run_captured(const std::vector<std::string>& argv, double timeout_s, bool own_group) {
  CapturedRun r;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return r;
  }
  // An exec failure is reported through this pipe, which exec closes on success.
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return r;
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) {
    r.error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], exec_pipe[0], exec_pipe[1]})
      close(fd);
    return r;
  }
  if (pid == 0) {
    if (own_group) setpgid(0, 0);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) place_fd(devnull, STDIN_FILENO);
    place_fd(out_pipe[1], STDOUT_FILENO);
    place_fd(err_pipe[1], STDERR_FILENO);
    signal(SIGPIPE, SIG_DFL);
    execv(args[0], args.data());
    int err = errno;
    (void)!write(exec_pipe[1], &err, sizeof err);
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  int exec_errno = 0;
  ssize_t got;
  do {
    got = read(exec_pipe[0], &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  close(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    waitpid(pid, nullptr, 0);
    close(out_pipe[0]);
    close(err_pipe[0]);
    r.error = "cannot run " + argv[0] + ": " + std::strerror(exec_errno);
    return r;
  }
  r.started = true;
  if (own_group) setpgid(pid, pid);  // also from here, so no kill below can miss the group
  // The whole group when it has one: what the program started dies with it.
  auto kill_all = [&] { kill(own_group ? -pid : pid, SIGKILL); };
  fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);

  const std::int64_t deadline = steady_ms() + static_cast<std::int64_t>(timeout_s * 1000);
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    std::int64_t left = deadline - steady_ms();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0},
                     {err_open ? err_pipe[0] : -1, POLLIN, 0}};
    int n = poll(fds, 2, static_cast<int>(std::min<std::int64_t>(left, 1000)));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (out_open && fds[0].revents) out_open = drain(out_pipe[0], &r.out, kMaxOut);
    if (err_open && fds[1].revents) err_open = drain(err_pipe[0], &r.err, kMaxErr);
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  if (r.timed_out) {
    kill_all();
    waitpid(pid, &status, 0);
    return r;
  }
  // Both pipes are closed, so it has exited or is about to; a program that closed its output
  // and kept running is given the rest of the deadline.
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return r;
    if (steady_ms() >= deadline) {
      r.timed_out = true;
      kill_all();
      waitpid(pid, &status, 0);
      return r;
    }
    usleep(10'000);
  }
  if (own_group) kill(-pid, SIGKILL);  // leftovers; ESRCH when there are none
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir;
    candidate += "/";
    candidate += name;
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return "";
}

}  // namespace orch::agent
