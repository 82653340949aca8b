#include "adapters/process/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

extern char** environ;

namespace orch::process {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string errno_text(int err) {
  return std::strerror(err);
}

// This process's environment with `extra` ("NAME=value") added, replacing same names.
std::vector<std::string> merged_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& x : extra) {
      if (x.substr(0, x.find('=')) == name) replaced = true;
    }
    if (!replaced) env.push_back(std::move(entry));
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& words) {
  std::vector<char*> ptrs;
  ptrs.reserve(words.size() + 1);
  for (auto& w : words) ptrs.push_back(w.data());
  ptrs.push_back(nullptr);
  return ptrs;
}

// Reads everything fd has now into `into`; closes it (fd = -1) at end of file or on error.
std::size_t drain(int& fd, std::string& into) {
  std::size_t total = 0;
  char buf[65536];
  for (int i = 0; i < 64 && fd >= 0; ++i) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<std::size_t>(n));
      total += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    ::close(fd);  // end of file, or an error nothing can be done about
    fd = -1;
  }
  return total;
}

}  // namespace

Result<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env) {
  return start(argv, env, false);
}

Result<ChildProcess> ChildProcess::spawn_with_stdin(const std::vector<std::string>& argv,
                                                    const std::vector<std::string>& env) {
  return start(argv, env, true);
}

Result<ChildProcess> ChildProcess::start(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env, bool stdin_pipe) {
  if (argv.empty()) return make_error(ErrorKind::internal, "spawn: empty command");
  int in[2] = {-1, -1};
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  if ((stdin_pipe && pipe2(in, O_CLOEXEC) != 0) || pipe2(out, O_CLOEXEC) != 0 ||
      pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) {
      if (fd >= 0) ::close(fd);
    }
    return make_error(ErrorKind::io, "cannot make pipes for " + argv[0] + ": " + errno_text(e));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdin_pipe) {
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  // The server's other descriptors (sockets, locks) are none of the child's business.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigfillset(&defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);  // a group of its own: signal_group reaches all of it
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> args = argv;
  std::vector<std::string> envs = merged_environment(env);
  auto arg_ptrs = c_strings(args);
  auto env_ptrs = c_strings(envs);
  pid_t pid = -1;
  const int rc =
      posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, arg_ptrs.data(), env_ptrs.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  ::close(err[1]);
  if (in[0] >= 0) ::close(in[0]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    if (in[1] >= 0) ::close(in[1]);
    return make_error(ErrorKind::io, "cannot run " + argv[0] + ": " + errno_text(rc));
  }
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
  ChildProcess child;
  child.pid_ = pid;
  child.in_fd_ = in[1];
  child.out_fd_ = out[0];
  child.err_fd_ = err[0];
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept {
  *this = std::move(other);
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    std::swap(pid_, other.pid_);
    std::swap(in_fd_, other.in_fd_);
    std::swap(out_fd_, other.out_fd_);
    std::swap(err_fd_, other.err_fd_);
    std::swap(reaped_, other.reaped_);
    std::swap(exit_, other.exit_);
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  close_fds();
}

bool ChildProcess::write_stdin(std::string_view data) {
  if (in_fd_ < 0) return false;
  // A child that closed its stdin would raise SIGPIPE, which ends the whole server by
  // default: block it on this thread and swallow the one raised here.
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigset_t old;
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  bool ok = true;
  while (!data.empty()) {
    const ssize_t n = ::write(in_fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  if (!ok) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &zero) > 0) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

void ChildProcess::close_stdin() {
  if (in_fd_ >= 0) ::close(in_fd_);
  in_fd_ = -1;
}

void ChildProcess::close_fds() {
  close_stdin();
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
  out_fd_ = err_fd_ = -1;
}

std::size_t ChildProcess::read_some(milliseconds timeout, std::string& out, std::string& err) {
  if (output_closed()) {  // nothing to read: wait for the exit instead
    wait_for(timeout);
    return 0;
  }
  pollfd fds[2];
  nfds_t n = 0;
  if (out_fd_ >= 0) fds[n++] = {out_fd_, POLLIN, 0};
  if (err_fd_ >= 0) fds[n++] = {err_fd_, POLLIN, 0};
  const int ready = ::poll(fds, n, static_cast<int>(timeout.count()));
  if (ready <= 0) return 0;
  std::size_t total = 0;
  if (out_fd_ >= 0) total += drain(out_fd_, out);
  if (err_fd_ >= 0) total += drain(err_fd_, err);
  return total;
}

void ChildProcess::signal_group(int sig) {
  if (pid_ > 0 && !reaped_) ::kill(-pid_, sig);
}

bool ChildProcess::try_wait() {
  if (reaped_) return true;
  if (pid_ <= 0) return true;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  while (r < 0 && errno == EINTR) r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return false;
  reaped_ = true;
  if (r > 0 && WIFEXITED(status)) {
    exit_ = {WEXITSTATUS(status), 0};
  } else if (r > 0 && WIFSIGNALED(status)) {
    exit_ = {-1, WTERMSIG(status)};
  }
  return true;
}

bool ChildProcess::wait_for(milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!try_wait()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

void terminate_child(ChildProcess& child, milliseconds grace, std::string& out, std::string& err) {
  if (!child.try_wait()) child.signal_group(SIGTERM);
  const auto deadline = Clock::now() + grace;
  while (Clock::now() < deadline && !(child.try_wait() && child.output_closed())) {
    child.read_some(milliseconds(20), out, err);
  }
  if (!child.try_wait()) {
    child.signal_group(SIGKILL);
    child.wait_for(milliseconds(5000));
  }
  child.read_some(milliseconds(0), out, err);
}

}  // namespace orch::process
