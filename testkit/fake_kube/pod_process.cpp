#include "testkit/fake_kube/pod_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace orch::fake_kube {
namespace {

struct Failure {
  int step;
  int err;
};

const char* const kSteps[] = {"setsid",         "open /dev/null", "open the log",
                              "redirect stdio", "chdir",          "exec"};

[[noreturn]] void fail(int report, int step) {
  Failure f{step, errno};
  (void)!write(report, &f, sizeof f);
  _exit(127);
}

// In the child after fork: async-signal-safe calls only.
[[noreturn]] void become_container(const ProcessSpec& spec, char* const* argv, char* const* envp,
                                   int report, pid_t server) {
  // Should the server die without stopping (a crashed test), its containers die with it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != server) _exit(1);
  if (setsid() < 0) fail(report, 0);
  const int in = open("/dev/null", O_RDONLY);
  if (in < 0) fail(report, 1);
  const int out = open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (out < 0) fail(report, 2);
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) fail(report, 3);
  // The server's sockets (Asio does not open them close-on-exec) stay out of the container.
  // (report is close-on-exec itself.)
  if (report > 3) ::close_range(3, static_cast<unsigned>(report - 1), 0);
  ::close_range(static_cast<unsigned>(report + 1), ~0U, 0);
  if (chdir(spec.cwd.c_str()) < 0) fail(report, 4);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD}) signal(sig, SIG_DFL);
  execve(argv[0], argv, envp);
  fail(report, 5);
}

}  // namespace

SpawnResult spawn_process(const ProcessSpec& spec) {
  SpawnResult result;
  if (spec.argv.empty()) {
    result.error = "no command";
    return result;
  }
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  const pid_t server = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    result.error = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return result;
  }
  if (pid == 0) {
    close(fds[0]);
    become_container(spec, argv.data(), envp.data(), fds[1], server);
  }
  close(fds[1]);
  Failure f{-1, 0};
  ssize_t n = 0;
  while ((n = read(fds[0], &f, sizeof f)) < 0 && errno == EINTR) {
  }
  close(fds[0]);
  if (n == static_cast<ssize_t>(sizeof f)) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const std::string what = f.step == 4 ? "chdir " + spec.cwd : kSteps[f.step];
    result.error = what + ": " + std::strerror(f.err);
    return result;
  }
  result.pid = pid;
  return result;
}

std::optional<int> poll_exit(pid_t pid) {
  int status = 0;
  pid_t r = 0;
  while ((r = waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (r == pid) return status;
  if (r < 0) return 0;  // not our child any more (reaped elsewhere): report a plain exit
  return std::nullopt;
}

void signal_group(pid_t pid, int sig) {
  if (pid > 0) ::kill(-pid, sig);
}

std::string find_executable(const std::string& name, const std::string& search_path) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return name;
  std::size_t start = 0;
  while (start <= search_path.size()) {
    auto end = search_path.find(':', start);
    if (end == std::string::npos) end = search_path.size();
    const std::string dir = search_path.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

}  // namespace orch::fake_kube
