// See run_command.h. One thread: a poll() loop woken by the job's output, by signals (through a
// self-pipe) and by the timers (the tracker's, and the relay's for a held partial line), so a
// quiet job costs the agent no CPU at all.
#include "agents/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "agents/agent_clock.h"
#include "agents/cli_values.h"
#include "agents/event_log.h"
#include "agents/job_process.h"
#include "agents/job_user.h"
#include "agents/json_writer.h"
#include "agents/node_local_dir.h"
#include "agents/node_name.h"
#include "agents/output_relay.h"
#include "agents/progress_tracker.h"
#include "agents/push_sender.h"
#include "agents/save_watch.h"
#include "scheduler/model/launch_limits.h"
#include "scheduler/model/log_tag.h"

namespace orch::agent {
namespace {

// After the grace, leftovers are killed in rounds this far apart (see supervise()).
constexpr int kKillRoundMs = 20;

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

bool parse_run_value(const std::string& flag, const std::string& v, RunOptions* options,
                     std::string* error) {
  std::int64_t n = 0;
  if (flag == "--events") {
    options->events_path = v;
  } else if (flag == "--node-name") {
    options->node_name = v;
  } else if (flag == "--run-as") {
    if (v.empty()) {
      *error = "--run-as wants a user name";
      return false;
    }
    options->run_as = v;
  } else if (flag == "--grace-ms") {
    if (!parse_int64(v, 0, 1'000'000, &n)) {
      *error = "--grace-ms wants milliseconds, got '" + v + "'";
      return false;
    }
    options->grace_ms = n;
  } else if (flag == "--heartbeat-s") {
    if (!parse_ms(v, 86'400, &options->heartbeat_ms)) {
      *error = "--heartbeat-s wants seconds (0 for none), got '" + v + "'";
      return false;
    }
  } else if (flag == "--io-stall-after-s") {
    if (!parse_ms(v, limits::kMaxHangAfterS, &options->io_stall_after_ms)) {
      *error = "--io-stall-after-s wants seconds (0 for no bound), got '" + v + "'";
      return false;
    }
  } else if (flag == "--push-url") {
    options->push_url = v;
  } else if (flag == "--push-every-s") {
    if (!parse_ms(v, 3600, &options->push_every_ms) || options->push_every_ms <= 0) {
      *error = "--push-every-s wants seconds above 0 (at most 3600), got '" + v + "'";
      return false;
    }
  } else if (flag == "--hang-after-s") {
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
  return true;
}

bool is_run_flag(const std::string& a) {
  return a == "--events" || a == "--node-name" || a == "--lock-fd" || a == "--grace-ms" ||
         a == "--heartbeat-s" || a == "--hang-after-s" || a == "--run-as" ||
         a == "--io-stall-after-s" || a == "--push-url" || a == "--push-every-s";
}

}  // namespace

bool parse_run_options(const std::vector<std::string>& args, RunOptions* options,
                       std::string* error) {
  PlaceFlags place;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (!is_run_flag(a) && !PlaceFlags::is_place_flag(a) && !is_watch_flag(a)) {
      *error = "unexpected argument '" + a + "' (put the command after --)";
      return false;
    }
    if (i + 1 >= args.size()) {
      *error = a + " needs a value";
      return false;
    }
    const std::string& v = args[++i];
    if (PlaceFlags::is_place_flag(a)) {
      place.set(a, v);
    } else if (is_watch_flag(a)) {
      if (!parse_watch_flag(a, v, &options->watch, error)) return false;
    } else if (!parse_run_value(a, v, options, error)) {
      return false;
    }
  }
  if (options->events_path.empty()) {
    *error = "--events FILE is required";
    return false;
  }
  std::string expanded;
  if (!place.finish(&options->place, error) ||
      !expand_events_path(options->events_path, 0, 0, &expanded, error)) {
    return false;
  }
  options->argv.assign(args.begin() + static_cast<long>(i), args.end());
  if (options->argv.empty()) {
    *error = "no command given after --";
    return false;
  }
  return true;
}

namespace {

// Whom the records and the command's environment are about: the node, and the task's place in
// its gang when it has one.
struct TaskIdentity {
  std::string node;
  std::optional<TaskPlace> place;
  std::optional<JobUser> user;  // --run-as: whom the command runs as
};

void write_identity(JsonWriter& w, const TaskIdentity& id, bool with_ranks) {
  w.member("node", id.node);
  if (!id.place) return;
  w.member("task_rank", task_rank(*id.place));
  if (!with_ranks) return;
  w.member("node_rank", id.place->node_rank);
  w.member("local_rank", id.place->local_rank);
}

// The lock tells the site we are alive for as long as this process lives; the job must not
// inherit it, or a job that outlives a killed agent would look like a live agent.
bool keep_lock_private(int lock_fd) {
  if (lock_fd < 0) return true;
  int flags = fcntl(lock_fd, F_GETFD);
  if (flags < 0 || fcntl(lock_fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
    std::fprintf(stderr, "orchestrate-agent: --lock-fd %d is not an open descriptor: %s\n", lock_fd,
                 std::strerror(errno));
    return false;
  }
  return true;
}

// Finds the task's place (srun's variables are read here) and the job's user, exports them and
// the node's name to the command (our environment is the child's) and opens the event file.
// false, having said why on stderr, when any of that fails: then the command is not run and
// nothing is recorded.
bool prepare(const RunOptions& options, TaskIdentity* id, EventLog* events,
             std::unique_ptr<PushSender>* pusher) {
  auto place = resolve_place(options.place, getenv_lookup);
  if (!place) {
    std::fprintf(stderr, "orchestrate-agent: %s\n", place.error().message.c_str());
    return false;
  }
  if (!options.run_as.empty()) {
    std::string why;
    JobUser user;
    if (!resolve_job_user(options.run_as, &user, &why)) {
      std::fprintf(stderr, "orchestrate-agent: %s\n", why.c_str());
      return false;
    }
    export_job_user(user);
    id->user = std::move(user);
  }
  id->place = *place;
  id->node = options.node_name.empty() ? default_node_name() : options.node_name;
  setenv("ORCH_NODE_NAME", id->node.c_str(), 1);
  if (std::string why; !prepare_node_local_dir(id->node, id->user ? &*id->user : nullptr, &why)) {
    std::fprintf(stderr, "orchestrate-agent: %s\n", why.c_str());
    return false;
  }
  if (id->place) {
    for (const auto& [name, value] : task_env(*id->place)) setenv(name.c_str(), value.c_str(), 1);
  }
  std::string path, error;
  const int task = id->place ? task_rank(*id->place) : 0;
  const int node = id->place ? id->place->node_rank : 0;
  PushConfig push;
  bool pushing = false;
  if (!read_push_config(options.push_url, options.push_every_ms, &push, &pushing, &error) ||
      (pushing && !(*pusher = PushSender::create(push, task, id->node, &error))) ||
      !expand_events_path(options.events_path, task, node, &path, &error) ||
      !events->open(path, &error)) {
    std::fprintf(stderr, "orchestrate-agent: %s\n", error.c_str());
    return false;
  }
  if (*pusher) events->set_observer([p = pusher->get()](const std::string& r) { p->add(r); });
  return true;
}

void write_start(EventLog& events, const TaskIdentity& id, pid_t child) {
  JsonWriter w;
  w.begin_object();
  w.member("event", "start");
  w.member("pid", static_cast<int>(child));
  w.member("agent_pid", static_cast<int>(getpid()));
  w.member("at_ms", wall_ms());
  write_identity(w, id, true);
  w.end_object();
  events.append(w.str(), true);
}

// Records how the job ended; returns the agent's exit status.
int write_exit(EventLog& events, const TaskIdentity& id, int status) {
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
  write_identity(w, id, false);
  w.end_object();
  events.append(w.str(), true);
  return exit_status;
}

// The job's stderr is relayed (a gang's task) but not scanned: protocol lines are stdout's.
const LineScanner::Callback ignore_lines = [](std::string_view) {};

struct Job {
  pid_t child;
  int wake_fd;
  long long grace_ms;
  LiveWatch& gpu_watch;  // the live watch (issue 43)
};

// Waits for the command, relaying its output and forwarding signals as they come. Then waits
// for whatever it left behind in our process group: a job is over when all of it is gone, so
// that a cancelled trainer finishes writing its checkpoint before we report the exit.
// Stragglers get SIGTERM and, after the grace, SIGKILL. Returns the command's wait status.
int supervise(const Job& job, OutputRelay& relay, OutputRelay* err_relay, ProgressTracker& tracker,
              SaveWatch& watch, EventLog& events, const LineScanner::Callback& on_line) {
  int status = 0;
  bool done = false;
  bool forwarded = false;
  std::int64_t stragglers_since = -1;
  bool check_children = true;  // SIGCHLD (through the self-pipe) says when to look again
  auto sooner = [](std::int64_t a, std::int64_t b) {
    return a < 0 ? b : b < 0 ? a : std::min(a, b);
  };
  for (;;) {
    if (int sig = take_pending_signal(); sig != 0) {
      forward_to_group(sig);
      forwarded = true;
    }
    if (check_children && !reap_and_check(job.child, &status, &done)) break;
    check_children = false;
    const std::int64_t now = steady_ms();
    std::int64_t timeout = sooner(tracker.next_due_in(now), relay.next_due_in(now));
    timeout = sooner(timeout, watch.next_due_in(now));
    if (err_relay) timeout = sooner(timeout, err_relay->next_due_in(now));
    timeout = sooner(timeout, job.gpu_watch.next_due_in(now));
    if (done) {
      if (stragglers_since < 0) {
        stragglers_since = now;
        job.gpu_watch.finish();
        if (!forwarded) forward_to_group(SIGTERM);
      }
      std::int64_t grace_left = stragglers_since + job.grace_ms - now;
      if (grace_left <= 0) {
        // Each round kills our children; their orphans become ours and go the next round.
        for (pid_t p : live_children()) kill(p, SIGKILL);
        grace_left = kKillRoundMs;
      }
      timeout = sooner(timeout, grace_left);
    }
    // A negative descriptor (no stderr relay, or its pipe closed) is skipped by poll().
    pollfd fds[4] = {{job.wake_fd, POLLIN, 0},
                     {relay.fd(), POLLIN, 0},
                     {err_relay ? err_relay->fd() : -1, POLLIN, 0},
                     {job.gpu_watch.fd(), POLLIN, 0}};
    int n = poll(fds, 4, static_cast<int>(std::min<std::int64_t>(timeout, 1 << 30)));
    if (n > 0 && fds[0].revents) {
      drain_wake_pipe(job.wake_fd);
      check_children = true;
    }
    if (n > 0 && fds[1].revents) relay.pump(on_line);
    if (n > 0 && fds[2].revents) err_relay->pump(ignore_lines);
    relay.on_tick(steady_ms());
    if (err_relay) err_relay->on_tick(steady_ms());
    bool stop = false;  // --fault-action stop and a fault found now
    for (const WatchRecord& r : job.gpu_watch.on_tick(steady_ms(), wall_ms(), &stop)) {
      events.append(r.line, r.durable);
    }
    if (stop && !forwarded) {
      forward_to_group(SIGTERM);
      forwarded = true;
    }
    append_all(events, watch.on_tick(steady_ms(), wall_ms()));
    auto due = tracker.on_tick(steady_ms(), wall_ms());
    watch.decorate(&due, steady_ms());  // a heartbeat repeats a stalled save
    append_all(events, due);
  }
  return status;
}

}  // namespace

int run_command(const RunOptions& options) {
  if (!keep_lock_private(options.lock_fd)) return 2;
  TaskIdentity id;
  EventLog events;
  std::unique_ptr<PushSender> pusher;  // records pushed home (issue 44); null: not asked for
  if (!prepare(options, &id, &events, &pusher)) return 2;
  // Orphaned descendants of the job become our children, so we can wait for them and reap them.
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  // Signals are forwarded to our process group, which must hold this task alone. The local site
  // starts us as a session leader; slurmstepd puts every task of a step on a node in the process
  // group of the first, so without a group of our own one task's leftovers-SIGTERM would reach
  // its neighbours, and a stand-alone agent would signal whoever started it.
  if (getpgrp() != getpid()) (void)setpgid(0, 0);
  // Whoever reads our stdout may go away; the job's output is then discarded, not fatal to us.
  signal(SIGPIPE, SIG_IGN);

  // The tasks of a gang share one output: each line must reach it whole, and tagged with the
  // task's node and rank, its stderr's too (then relayed like stdout, through a pipe of its own).
  const bool whole_lines = id.place && task_count(*id.place) > 1;
  std::string error;
  int out[2];
  int err_pipe[2] = {-1, -1};
  const int wake_fd = install_job_signals(&error);
  if (wake_fd < 0 || pipe2(out, O_CLOEXEC) != 0 ||
      (whole_lines && pipe2(err_pipe, O_CLOEXEC) != 0)) {
    if (error.empty()) error = std::string("pipe failed: ") + std::strerror(errno);
    std::fprintf(stderr, "orchestrate-agent: %s\n", error.c_str());
    return 2;
  }
  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "orchestrate-agent: fork failed: %s\n", std::strerror(errno));
    return 2;
  }
  if (child == 0) exec_child(argv.data(), out[1], id.user ? &*id.user : nullptr, err_pipe[1]);
  close(out[1]);
  if (err_pipe[1] >= 0) close(err_pipe[1]);
  const std::string tag = whole_lines ? log_tag_text(id.node, task_rank(*id.place)) : "";
  OutputRelay relay(out[0], STDOUT_FILENO, whole_lines, tag);
  std::optional<OutputRelay> err_relay;
  if (whole_lines) err_relay.emplace(err_pipe[0], STDERR_FILENO, true, tag);
  unblock_job_signals();
  if (pusher) pusher->start();  // after the fork: the child is forked from one thread
  write_start(events, id, child);

  TrackerOptions tracker_options;
  tracker_options.heartbeat_ms = options.heartbeat_ms;
  tracker_options.hang_after_ms = options.hang_after_ms;
  tracker_options.node = id.node;
  if (id.place) tracker_options.task_rank = task_rank(*id.place);
  ProgressTracker tracker(tracker_options, steady_ms());
  // Every record after a GPU fault repeats it; heartbeats carry the GPU readings.
  // One watch per node: its first task's. The node's GPUs and kernel log are the same for all its
  // tasks, and eight tasks must not run eight nvidia-smi every sample.
  WatchOptions node_watch = options.watch;
  if (id.place && id.place->local_rank != 0) node_watch.watch_ms = 0;
  LiveWatch gpu_watch(node_watch, id.node, id.place ? task_rank(*id.place) : -1);
  events.set_decorator([&gpu_watch](const std::string& line) { return gpu_watch.decorate(line); });
  gpu_watch.start(steady_ms());
  SaveWatchOptions watch_options{options.io_stall_after_ms, id.node, tracker_options.task_rank};
  SaveWatch watch(watch_options, [](const std::string& p) { return mount_of_path(p); });
  auto on_line = [&](std::string_view line) {
    auto p = scan_protocol_line(line);
    if (p && p->kind == ProtocolLine::Kind::checkpoint_start) {
      append_all(events, watch.on_start(p->step, p->path, steady_ms(), wall_ms()));
    } else if (p) {
      auto records = tracker.on_line(*p, steady_ms(), wall_ms());
      watch.decorate(&records, steady_ms());  // a checkpoint record gains save_s
      if (p->kind == ProtocolLine::Kind::checkpoint) watch.on_checkpoint(steady_ms());
      append_all(events, records);
    }
  };
  const int status = supervise({child, wake_fd, options.grace_ms, gpu_watch}, relay,
                               err_relay ? &*err_relay : nullptr, tracker, watch, events, on_line);
  relay.finish(on_line);
  if (err_relay) err_relay->finish(ignore_lines);
  append_all(events, tracker.flush());
  const int exit_status = write_exit(events, id, status);
  if (pusher) pusher->finish();  // bounded: PushConfig::exit_wait_ms
  return exit_status;
}

}  // namespace orch::agent
