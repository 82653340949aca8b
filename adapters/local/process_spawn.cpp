#include "adapters/local/process_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace orch::local {
namespace {

// The children tell the server how it went through a close-on-exec pipe: the intermediate child
// sends the agent's pid, the agent sends a failed step and its errno. EOF with no failure means
// exec succeeded. Records are tiny, so each write is atomic.
enum Step : std::int32_t {
  kPid = 0,
  kForkAgent,
  kSetsid,
  kOpenDevNull,
  kOpenOutput,
  kRedirect,
  kOpenLock,
  kFlock,
  kChdir,
  kExec,
};

struct Record {
  std::int32_t step;
  std::int32_t value;
};

const char* step_text(std::int32_t step) {
  switch (step) {
    case kForkAgent:
      return "fork the agent";
    case kSetsid:
      return "start a new session (setsid)";
    case kOpenDevNull:
      return "open /dev/null";
    case kOpenOutput:
      return "open the output log";
    case kRedirect:
      return "redirect stdio";
    case kOpenLock:
      return "open the agent lock";
    case kFlock:
      return "lock the agent lock";
    case kChdir:
      return "enter the run directory";
    case kExec:
      return "execute the agent";
    default:
      return "start the agent";
  }
}

[[noreturn]] void fail(int pipe_fd, Step step) {
  Record r{step, errno};
  (void)!write(pipe_fd, &r, sizeof r);
  _exit(127);
}

void close_range_except(int low, int keep) {
  // close_range is one system call; the loop is the fallback for kernels without it.
  if (::close_range(static_cast<unsigned>(low), static_cast<unsigned>(keep - 1), 0) == 0 &&
      ::close_range(static_cast<unsigned>(keep + 1), ~0U, 0) == 0) {
    return;
  }
  long max_fd = sysconf(_SC_OPEN_MAX);
  if (max_fd < 0 || max_fd > 65536) max_fd = 65536;
  for (int fd = low; fd < max_fd; ++fd) {
    if (fd != keep) close(fd);
  }
}

// Runs in the grandchild: only async-signal-safe calls.
[[noreturn]] void become_agent(const SpawnSpec& spec, char* const* argv, char* const* envp,
                               int pipe_w) {
  // Keep the report pipe out of the way of the descriptors we are about to set up.
  int report = fcntl(pipe_w, F_DUPFD_CLOEXEC, 10);
  if (report < 0) report = pipe_w;
  if (setsid() < 0) fail(report, kSetsid);
  int in = open("/dev/null", O_RDONLY);
  if (in < 0) fail(report, kOpenDevNull);
  // The server's alone (the job writes to it through the descriptor it inherits).
  int out = open(spec.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (out < 0) fail(report, kOpenOutput);
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) fail(report, kRedirect);
  int lock = open(spec.lock_path.c_str(), O_RDWR | O_CREAT, 0600);
  if (lock < 0) fail(report, kOpenLock);
  // Blocking: a concurrent liveness probe holds a shared lock for an instant only.
  while (flock(lock, LOCK_EX) < 0) {
    if (errno != EINTR) fail(report, kFlock);
  }
  if (lock != kAgentLockFd && dup2(lock, kAgentLockFd) < 0) fail(report, kRedirect);
  close_range_except(kAgentLockFd + 1, report);
  if (chdir(spec.cwd.c_str()) < 0) fail(report, kChdir);
  // The server may ignore or block signals; the agent starts from a clean slate.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCHLD}) signal(sig, SIG_DFL);
  execve(argv[0], argv, envp);
  fail(report, kExec);
}

}  // namespace

Result<pid_t> spawn_detached(const SpawnSpec& spec) {
  // Everything the children need is built before fork: after it, no allocation is allowed.
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0) {
    return make_error(ErrorKind::io, std::string("cannot create a pipe to start the agent: ") +
                                         std::strerror(errno));
  }
  pid_t middle = fork();
  if (middle < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return make_error(ErrorKind::io,
                      std::string("cannot fork to start the agent: ") + std::strerror(err));
  }
  if (middle == 0) {
    close(fds[0]);
    pid_t agent = fork();
    if (agent < 0) fail(fds[1], kForkAgent);
    if (agent == 0) become_agent(spec, argv.data(), envp.data(), fds[1]);
    Record r{kPid, static_cast<std::int32_t>(agent)};
    (void)!write(fds[1], &r, sizeof r);
    _exit(0);
  }
  close(fds[1]);

  pid_t agent_pid = -1;
  Record failure{-1, 0};
  Record r{};
  size_t have = 0;
  auto* bytes = reinterpret_cast<char*>(&r);
  for (;;) {
    ssize_t n = read(fds[0], bytes + have, sizeof r - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += static_cast<size_t>(n);
    if (have < sizeof r) continue;
    have = 0;
    if (r.step == kPid) {
      agent_pid = r.value;
    } else {
      failure = r;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }

  if (failure.step >= 0) {
    return make_error(ErrorKind::io, std::string("cannot ") + step_text(failure.step) + " (" +
                                         spec.argv[0] + " in " + spec.cwd +
                                         "): " + std::strerror(failure.value));
  }
  if (agent_pid <= 0) {
    return make_error(ErrorKind::internal,
                      "the agent starter exited without reporting the agent's pid (status " +
                          std::to_string(status) + ")");
  }
  return agent_pid;
}

}  // namespace orch::local
