#include "agents/run_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace orch::agent {
namespace {

// The signals a scheduler or an operator uses to ask a job to stop (or to checkpoint). The agent
// catches them and passes them on, so the job decides what to do and the agent stays to record
// how the job ended.
constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};

// The handler only notes the signal; the main loop forwards it (see forward_to_group).
volatile sig_atomic_t g_pending_signal = 0;

void note_signal(int sig) {
  g_pending_signal = sig;
}

// Sends sig to every process in our process group but us. The job's shell may not exec its
// command, so the process that must see the signal (the trainer, to save a checkpoint) is often
// a grandchild: signalling only our child would orphan it. We ignore the signal for the instant
// of the kill(), so our own copy is discarded instead of handled again.
void forward_to_group(int sig) {
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(sig, &ign, &old);
  kill(0, sig);
  sigaction(sig, &old, nullptr);
}

// Our live children, from /proc (we are a subreaper, so orphaned descendants become children).
std::vector<pid_t> live_children() {
  std::vector<pid_t> out;
  std::ifstream in("/proc/self/task/" + std::to_string(getpid()) + "/children");
  pid_t pid = 0;
  while (in >> pid) out.push_back(pid);
  return out;
}

// Reaps whatever has exited; true while any descendant is still alive.
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

void sleep_ms(long ms) {
  struct timespec ts {
    ms / 1000, (ms % 1000) * 1'000'000
  };
  nanosleep(&ts, nullptr);  // a signal cuts it short, which is what we want
}

long long now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// One event is one write() of one line to an O_APPEND fd, then fsync: a reader never sees half a
// line from us, and the exit record is on disk before our lock (held by the parent) goes away.
bool append_event(int fd, const std::string& line) {
  std::string out = line + "\n";
  const char* p = out.data();
  size_t left = out.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return fsync(fd) == 0 || errno == EINVAL;  // EINVAL: a pipe or /dev/null in manual use
}

bool parse_int(const std::string& s, int* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < 0 || v > 1'000'000) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

bool parse_run_options(const std::vector<std::string>& args, RunOptions* options,
                       std::string* error) {
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--events" || a == "--lock-fd" || a == "--grace-ms") {
      if (i + 1 >= args.size()) {
        *error = a + " needs a value";
        return false;
      }
      const std::string& v = args[++i];
      if (a == "--events") {
        options->events_path = v;
      } else if (a == "--grace-ms") {
        int ms = 0;
        if (!parse_int(v, &ms)) {
          *error = "--grace-ms wants milliseconds, got '" + v + "'";
          return false;
        }
        options->grace_ms = ms;
      } else if (!parse_int(v, &options->lock_fd)) {
        *error = "--lock-fd wants a file descriptor number, got '" + v + "'";
        return false;
      }
      continue;
    }
    *error = "unexpected argument '" + a + "' (put the command after --)";
    return false;
  }
  if (options->events_path.empty()) {
    *error = "--events FILE is required";
    return false;
  }
  options->argv.assign(args.begin() + static_cast<long>(i), args.end());
  if (options->argv.empty()) {
    *error = "no command given after --";
    return false;
  }
  return true;
}

int run_command(const RunOptions& options) {
  // The lock tells the site we are alive for as long as this process lives; the job must not
  // inherit it, or a job that outlives a killed agent would look like a live agent.
  if (options.lock_fd >= 0) {
    int flags = fcntl(options.lock_fd, F_GETFD);
    if (flags < 0 || fcntl(options.lock_fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
      std::fprintf(stderr, "orchestrate-agent: --lock-fd %d is not an open descriptor: %s\n",
                   options.lock_fd, std::strerror(errno));
      return 2;
    }
  }
  // Orphaned descendants of the job become our children, so we can wait for them and reap them.
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  int events = open(options.events_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (events < 0) {
    std::fprintf(stderr, "orchestrate-agent: cannot open event file %s: %s\n",
                 options.events_path.c_str(), std::strerror(errno));
    return 2;
  }

  // Block the forwarded signals until the child's pid is known, so none is lost or handled
  // before there is someone to forward it to.
  sigset_t block, old_mask;
  sigemptyset(&block);
  for (int sig : kForwarded) sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, &old_mask);
  struct sigaction sa {};
  sa.sa_handler = note_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);

  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "orchestrate-agent: fork failed: %s\n", std::strerror(errno));
    return 2;
  }
  if (child == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int sig : kForwarded) sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execvp(argv[0], argv.data());
    // Only async-signal-safe calls here: the message goes straight to stderr.
    const char* msg = "orchestrate-agent: cannot run the command: ";
    const char* why = strerror(errno);
    (void)!write(STDERR_FILENO, msg, strlen(msg));
    (void)!write(STDERR_FILENO, why, strlen(why));
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(127);
  }
  sigset_t unblock = old_mask;
  for (int sig : kForwarded) sigdelset(&unblock, sig);
  sigprocmask(SIG_SETMASK, &unblock, nullptr);

  char line[256];
  std::snprintf(line, sizeof line, R"({"event":"start","pid":%d,"agent_pid":%d,"at_ms":%lld})",
                static_cast<int>(child), static_cast<int>(getpid()), now_ms());
  if (!append_event(events, line)) {
    std::fprintf(stderr, "orchestrate-agent: cannot write event file %s: %s\n",
                 options.events_path.c_str(), std::strerror(errno));
  }

  // Wait for the command, forwarding signals as they come. Then wait for whatever it left
  // behind in our process group: a job is over when all of it is gone, so that a cancelled
  // trainer finishes writing its checkpoint before we report the exit. Stragglers get SIGTERM
  // and, after the grace, SIGKILL.
  int status = 0;
  bool done = false;
  bool forwarded = false;
  long long stragglers_since = -1;
  for (;;) {
    if (int sig = g_pending_signal; sig != 0) {
      g_pending_signal = 0;
      forward_to_group(sig);
      forwarded = true;
    }
    bool alive = reap_and_check(child, &status, &done);
    if (!alive) break;
    if (done) {
      if (stragglers_since < 0) {
        stragglers_since = now_ms();
        if (!forwarded) forward_to_group(SIGTERM);
      } else if (now_ms() - stragglers_since >= options.grace_ms) {
        // Each round kills our children; their orphans become ours and go the next round.
        for (pid_t p : live_children()) kill(p, SIGKILL);
      }
    }
    sleep_ms(20);
  }

  int exit_status = 0;
  if (WIFSIGNALED(status)) {
    exit_status = 128 + WTERMSIG(status);
    std::snprintf(line, sizeof line, R"({"event":"exit","signal":%d,"at_ms":%lld})",
                  WTERMSIG(status), now_ms());
  } else {
    exit_status = WEXITSTATUS(status);
    std::snprintf(line, sizeof line, R"({"event":"exit","exit_code":%d,"at_ms":%lld})", exit_status,
                  now_ms());
  }
  if (!append_event(events, line)) {
    std::fprintf(stderr, "orchestrate-agent: cannot write event file %s: %s\n",
                 options.events_path.c_str(), std::strerror(errno));
  }
  close(events);
  return exit_status;
}

}  // namespace orch::agent
