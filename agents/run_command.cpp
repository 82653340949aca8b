// See run_command.h. One thread: a poll() loop woken by the job's output, by signals (through a
// self-pipe) and by the tracker's timers, so a quiet job costs the agent no CPU at all.
#include "agents/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "agents/agent_clock.h"
#include "agents/cli_values.h"
#include "agents/event_log.h"
#include "agents/json_writer.h"
#include "agents/output_relay.h"
#include "agents/progress_tracker.h"
#include "scheduler/model/launch_limits.h"

namespace orch::agent {
namespace {

// The signals a scheduler or an operator uses to ask a job to stop (or to checkpoint). The agent
// catches them and passes them on, so the job decides what to do and the agent stays to record
// how the job ended.
constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};

// After the grace, leftovers are killed in rounds this far apart (see the main loop).
constexpr int kKillRoundMs = 20;

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

bool parse_ms(const std::string& v, double max_s, long long* out) {
  double s = 0;
  if (!parse_seconds(v, max_s, &s)) return false;
  *out = std::llround(s * 1000);
  return true;
}

void append_all(EventLog& log, const std::vector<EventRecord>& records) {
  for (const EventRecord& r : records) {
    log.append(r.line, r.durable);
    if (!r.warning.empty()) std::fprintf(stderr, "%s\n", r.warning.c_str());
  }
}

// In the forked child: the default signal dispositions and mask a fresh program expects, and
// the pipe as stdout. Only async-signal-safe calls.
[[noreturn]] void exec_child(char* const* argv, int stdout_fd) {
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
  execvp(argv[0], argv);
  const char* msg = "orchestrate-agent: cannot run the command: ";
  const char* why = strerror(errno);
  (void)!write(STDERR_FILENO, msg, strlen(msg));
  (void)!write(STDERR_FILENO, why, strlen(why));
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(127);
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
    if (a == "--events" || a == "--lock-fd" || a == "--grace-ms" || a == "--heartbeat-s" ||
        a == "--hang-after-s") {
      if (i + 1 >= args.size()) {
        *error = a + " needs a value";
        return false;
      }
      const std::string& v = args[++i];
      std::int64_t n = 0;
      if (a == "--events") {
        options->events_path = v;
      } else if (a == "--grace-ms") {
        if (!parse_int64(v, 0, 1'000'000, &n)) {
          *error = "--grace-ms wants milliseconds, got '" + v + "'";
          return false;
        }
        options->grace_ms = n;
      } else if (a == "--heartbeat-s") {
        if (!parse_ms(v, 86'400, &options->heartbeat_ms)) {
          *error = "--heartbeat-s wants seconds (0 for none), got '" + v + "'";
          return false;
        }
      } else if (a == "--hang-after-s") {
        if (!parse_ms(v, limits::kMaxHangAfterS, &options->hang_after_ms)) {
          *error = "--hang-after-s wants seconds (0 for never), got '" + v + "'";
          return false;
        }
      } else {
        if (!parse_int64(v, 0, 1'000'000, &n)) {
          *error = "--lock-fd wants a file descriptor number, got '" + v + "'";
          return false;
        }
        options->lock_fd = static_cast<int>(n);
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
  EventLog events;
  std::string error;
  if (!events.open(options.events_path, &error)) {
    std::fprintf(stderr, "orchestrate-agent: %s\n", error.c_str());
    return 2;
  }
  // Whoever reads our stdout may go away; the job's output is then discarded, not fatal to us.
  signal(SIGPIPE, SIG_IGN);

  int wake[2], out[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "orchestrate-agent: pipe failed: %s\n", std::strerror(errno));
    return 2;
  }
  g_wake_fd = wake[1];

  // Block the signals we handle until the child's pid is known, so none is lost or handled
  // before there is someone to forward it to.
  sigset_t block, old_mask;
  sigemptyset(&block);
  for (int sig : kForwarded) sigaddset(&block, sig);
  sigaddset(&block, SIGCHLD);
  sigprocmask(SIG_BLOCK, &block, &old_mask);
  struct sigaction sa {};
  sa.sa_handler = note_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
  sa.sa_handler = note_child;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, nullptr);

  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "orchestrate-agent: fork failed: %s\n", std::strerror(errno));
    return 2;
  }
  if (child == 0) exec_child(argv.data(), out[1]);
  close(out[1]);
  OutputRelay relay(out[0], STDOUT_FILENO);
  sigset_t unblock = old_mask;
  for (int sig : kForwarded) sigdelset(&unblock, sig);
  sigdelset(&unblock, SIGCHLD);
  sigprocmask(SIG_SETMASK, &unblock, nullptr);

  {
    JsonWriter w;
    w.begin_object();
    w.member("event", "start");
    w.member("pid", static_cast<int>(child));
    w.member("agent_pid", static_cast<int>(getpid()));
    w.member("at_ms", wall_ms());
    w.end_object();
    events.append(w.str(), true);
  }

  TrackerOptions tracker_options;
  tracker_options.heartbeat_ms = options.heartbeat_ms;
  tracker_options.hang_after_ms = options.hang_after_ms;
  ProgressTracker tracker(tracker_options, steady_ms());
  auto on_line = [&](std::string_view line) {
    if (auto p = scan_protocol_line(line)) {
      append_all(events, tracker.on_line(*p, steady_ms(), wall_ms()));
    }
  };

  // Wait for the command, relaying its output and forwarding signals as they come. Then wait for
  // whatever it left behind in our process group: a job is over when all of it is gone, so that
  // a cancelled trainer finishes writing its checkpoint before we report the exit. Stragglers
  // get SIGTERM and, after the grace, SIGKILL.
  int status = 0;
  bool done = false;
  bool forwarded = false;
  std::int64_t stragglers_since = -1;
  bool check_children = true;  // SIGCHLD (through the self-pipe) says when to look again
  for (;;) {
    if (int sig = g_pending_signal; sig != 0) {
      g_pending_signal = 0;
      forward_to_group(sig);
      forwarded = true;
    }
    if (check_children && !reap_and_check(child, &status, &done)) break;
    check_children = false;
    std::int64_t timeout = tracker.next_due_in(steady_ms());
    if (done) {
      std::int64_t now = steady_ms();
      if (stragglers_since < 0) {
        stragglers_since = now;
        if (!forwarded) forward_to_group(SIGTERM);
      }
      std::int64_t grace_left = stragglers_since + options.grace_ms - now;
      if (grace_left <= 0) {
        // Each round kills our children; their orphans become ours and go the next round.
        for (pid_t p : live_children()) kill(p, SIGKILL);
        grace_left = kKillRoundMs;
      }
      timeout = timeout < 0 ? grace_left : std::min(timeout, grace_left);
    }
    pollfd fds[2] = {{wake[0], POLLIN, 0}, {relay.fd(), POLLIN, 0}};
    int n = poll(fds, 2, static_cast<int>(std::min<std::int64_t>(timeout, 1 << 30)));
    if (n > 0 && fds[0].revents) {
      char buf[64];
      while (read(wake[0], buf, sizeof buf) > 0) {
      }
      check_children = true;
    }
    if (n > 0 && fds[1].revents) relay.pump(on_line);
    append_all(events, tracker.on_tick(steady_ms(), wall_ms()));
  }
  relay.finish(on_line);
  append_all(events, tracker.flush());

  int exit_status = 0;
  JsonWriter w;
  w.begin_object();
  w.member("event", "exit");
  if (WIFSIGNALED(status)) {
    exit_status = 128 + WTERMSIG(status);
    w.member("signal", WTERMSIG(status));
  } else {
    exit_status = WEXITSTATUS(status);
    w.member("exit_code", exit_status);
  }
  w.member("at_ms", wall_ms());
  w.end_object();
  events.append(w.str(), true);
  return exit_status;
}

}  // namespace orch::agent
