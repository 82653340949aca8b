// See job_process.h.
#include "agents/job_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>

namespace orch::agent {
namespace {

// The signals a scheduler or an operator uses to ask a job to stop (or to checkpoint). The agent
// catches them and passes them on, so the job decides what to do and the agent stays to record
// how the job ended.
constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};

// The handlers only note what happened and wake the loop through the self-pipe; the loop does
// the work (forwarding, reaping) outside signal context.
volatile sig_atomic_t g_pending_signal = 0;
int g_wake_fd = -1;

void wake_loop() {
  int saved = errno;
  char c = 0;
  (void)!write(g_wake_fd, &c, 1);
  errno = saved;
}

void note_signal(int sig) {
  g_pending_signal = sig;
  wake_loop();
}

void note_child(int) {
  wake_loop();
}

sigset_t g_old_mask;

}  // namespace

int install_job_signals(std::string* error) {
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    *error = std::string("pipe failed: ") + std::strerror(errno);
    return -1;
  }
  g_wake_fd = wake[1];
  sigset_t block;
  sigemptyset(&block);
  for (int sig : kForwarded) sigaddset(&block, sig);
  sigaddset(&block, SIGCHLD);
  sigprocmask(SIG_BLOCK, &block, &g_old_mask);
  struct sigaction sa {};
  sa.sa_handler = note_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
  sa.sa_handler = note_child;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, nullptr);
  return wake[0];
}

void unblock_job_signals() {
  sigset_t unblock = g_old_mask;
  for (int sig : kForwarded) sigdelset(&unblock, sig);
  sigdelset(&unblock, SIGCHLD);
  sigprocmask(SIG_SETMASK, &unblock, nullptr);
}

void drain_wake_pipe(int wake_fd) {
  char buf[64];
  while (read(wake_fd, buf, sizeof buf) > 0) {
  }
}

int take_pending_signal() {
  int sig = g_pending_signal;
  g_pending_signal = 0;
  return sig;
}

// The job's shell may not exec its command, so the process that must see the signal (the
// trainer, to save a checkpoint) is often a grandchild: signalling only our child would orphan
// it. We ignore the signal for the instant of the kill(), so our own copy is discarded instead
// of handled again.
void forward_to_group(int sig) {
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(sig, &ign, &old);
  kill(0, sig);
  sigaction(sig, &old, nullptr);
}

std::vector<pid_t> live_children() {
  std::vector<pid_t> out;
  std::ifstream in("/proc/self/task/" + std::to_string(getpid()) + "/children");
  pid_t pid = 0;
  while (in >> pid) out.push_back(pid);
  return out;
}

bool reap_and_check(pid_t main_child, int* main_status, bool* main_done) {
  for (;;) {
    int status = 0;
    pid_t r = waitpid(-1, &status, WNOHANG);
    if (r > 0) {
      if (r == main_child) {
        *main_status = status;
        *main_done = true;
      }
      continue;
    }
    if (r == 0) return true;  // children left, none exited just now
    if (errno == EINTR) continue;
    return false;  // ECHILD: nothing left
  }
}

namespace {

// One line on stderr from the forked child, "orchestrate-agent: " and the parts: write(2) only.
void say(std::initializer_list<const char*> parts) {
  const char* prefix = "orchestrate-agent: ";
  (void)!write(STDERR_FILENO, prefix, strlen(prefix));
  for (const char* part : parts) (void)!write(STDERR_FILENO, part, strlen(part));
  (void)!write(STDERR_FILENO, "\n", 1);
}

}  // namespace

// Only async-signal-safe calls: we are in a forked child.
[[noreturn]] void exec_child(char* const* argv, int stdout_fd, const JobUser* user, int stderr_fd) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig : kForwarded) sigaction(sig, &dfl, nullptr);
  sigaction(SIGCHLD, &dfl, nullptr);
  sigaction(SIGPIPE, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (stdout_fd == STDOUT_FILENO) {
    fcntl(stdout_fd, F_SETFD, 0);  // dup2 onto itself would keep close-on-exec
  } else {
    dup2(stdout_fd, STDOUT_FILENO);
  }
  if (stderr_fd >= 0) dup2(stderr_fd, STDERR_FILENO);  // a gang's task: tagged by the agent
  if (user != nullptr) {
    if (const char* step = become_job_user(*user); step != nullptr) {
      say({"cannot run the job as ", user->name.c_str(), ": ", step, ": ", strerror(errno)});
      _exit(127);
    }
  }
  execvp(argv[0], argv);
  say({"cannot run the command: ", strerror(errno)});
  _exit(127);
}

}  // namespace orch::agent
