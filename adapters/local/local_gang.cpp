// LocalSite's gangs (issue 14): a launch of nodes x tasks_per_node tasks is one agent per task,
// each in its own process group with its own lock and event file, so one virtual node can die
// alone. The attempt's phase is judge_gang() over the tasks (scheduler/model/gang_verdict.h);
// once a task's failure ends the gang it is written to gang_failure.json (so the verdict
// survives a restart and later deaths of its peers do not change it) and the survivors are
// killed, as srun --kill-on-bad-exit does.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "adapters/local/format_arg.h"
#include "adapters/local/local_site.h"
#include "adapters/local/process_spawn.h"
#include "scheduler/common/clock.h"
#include "scheduler/model/container.h"
#include "scheduler/model/job_shape.h"
#include "scheduler/model/launch_contract.h"
#include "scheduler/model/workdir.h"

namespace orch {
namespace {

namespace fs = std::filesystem;

// How long observe waits for killed survivors to be gone before it reports the gang's end.
constexpr auto kSurvivorWait = std::chrono::seconds(1);

nlohmann::json failure_to_json(const GangVerdict& v) {
  const ExitStatus& s = *v.exit;
  nlohmann::json j = {{"task", v.failed_task},
                      {"node", s.failed_node},
                      {"detail", s.detail},
                      {"node_lost", s.node_lost},
                      {"at_ms", SystemClock().now_ms()}};
  // A GPU fault's cause (issue 43); node_lost stands for itself.
  if (s.cause && !s.node_lost) j["cause"] = std::string(to_string(*s.cause));
  if (s.exit_code) j["exit_code"] = *s.exit_code;
  if (s.signal) j["signal"] = *s.signal;
  return j;
}

std::optional<GangVerdict> failure_from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  GangVerdict v;
  v.phase = RunPhase::exited;
  ExitStatus s;
  s.failed_node = j.value("node", "");
  s.detail = j.value("detail", "");
  s.node_lost = j.value("node_lost", false);
  if (s.node_lost) s.cause = ExitCause::node_lost;
  if (auto c = j.find("cause"); c != j.end() && c->is_string()) {
    if (auto cause = parse_exit_cause(c->get<std::string>())) s.cause = *cause;
  }
  if (j.contains("exit_code") && j["exit_code"].is_number_integer()) {
    s.exit_code = j["exit_code"].get<int>();
  }
  if (j.contains("signal") && j["signal"].is_number_integer()) s.signal = j["signal"].get<int>();
  v.exit = s;
  v.failed_task = j.value("task", -1);
  if (v.failed_task >= 0) v.exit->failed_rank = v.failed_task;
  return v;
}

}  // namespace

Result<std::vector<std::string>> LocalSite::container_prefix(const LaunchRequest& request,
                                                             const std::string& work) const {
  if (request.container.empty()) return std::vector<std::string>{};
  if (options_.containers != ContainerRuntime::apptainer) {
    return make_error(ErrorKind::invalid,
                      "local site " + options_.name +
                          " runs no containers (local.containers is none): the job asks for "
                          "image " +
                          request.container.image);
  }
  // The site's directories at the same paths inside: run, code, setup, checkpoints, datasets.
  const std::vector<std::string> bind =
      bind_dirs({options_.root, checkpoints_dir(), datasets_dir()});
  return apptainer_prefix(request.container, bind,
                          request.workdir.empty() ? work : request.workdir);
}

int LocalSite::task_count(const LaunchRequest& request) {
  return std::max(1, request.nodes) * std::max(1, request.tasks_per_node);
}

Result<bool> LocalSite::task_never_started(const local::TaskPaths& task) const {
  auto alive = local::agent_alive(task.lock);
  if (!alive) return alive.error();
  return !*alive && !local::path_exists(task.agent_pid) && !local::path_exists(task.events);
}

Result<pid_t> LocalSite::start_task(const local::StoredRequest& run, int rank) {
  const LaunchRequest& request = run.request;
  const std::vector<std::string>& nodes = run.nodes;
  local::RunPaths paths = local::run_paths(options_.root, request.token);
  local::TaskPaths task = local::task_paths(paths, rank);
  const int per_node = std::max(1, request.tasks_per_node);
  const int node_rank = rank / per_node;
  std::error_code ec;
  fs::create_directories(task.dir, ec);
  if (ec) return make_error(ErrorKind::io, "cannot create " + task.dir + ": " + ec.message());
  local::SpawnSpec spec;
  spec.argv = {options_.agent_path, "run", "--events", task.events, "--lock-fd",
               std::to_string(local::kAgentLockFd), "--hang-after-s",
               local::format_arg(request.hang_after_s), "--heartbeat-s",
               local::format_arg(request.heartbeat_s), "--node-name",
               nodes.at(static_cast<std::size_t>(node_rank)), "--node-rank",
               std::to_string(node_rank), "--nnodes", std::to_string(std::max(1, request.nodes)),
               "--tasks-per-node", std::to_string(per_node), "--local-rank",
               std::to_string(rank % per_node),
               // Every virtual node is this machine: the gang meets on loopback.
               "--master-addr", "127.0.0.1", "--master-port",
               std::to_string(master_port_for(request.token))};
  // The live watch (issue 43): the cluster's flags; the agent fills in {node}.
  for (auto& word : live_watch_flags(options_.live_watch)) spec.argv.push_back(std::move(word));
  // I/O stalls (issue 43): the bound from the job's median save.
  if (request.io_stall_after_s > 0) {
    spec.argv.insert(spec.argv.end(),
                     {"--io-stall-after-s", local::format_arg(request.io_stall_after_s)});
  }
  // The agent stays this process's user; only the job's process becomes run_as.
  if (!options_.run_as.empty()) spec.argv.insert(spec.argv.end(), {"--run-as", options_.run_as});
  spec.argv.push_back("--");
  // In the job's image when it has one (issue 40, container.h): all that follows runs there.
  auto image = container_prefix(request, paths.work);
  if (!image) return image.error();
  spec.argv.insert(spec.argv.end(), image->begin(), image->end());
  // The job's code and setup first (issue 40, workdir.h): extracted, set up, then its tree.
  if (std::string prelude = task_prelude(request); !prelude.empty()) {
    spec.argv.insert(spec.argv.end(), {"/bin/sh", "-c", std::move(prelude), "orch-task"});
  }
  // The job's shell (`shell:`; job_shape.h): bash where the machine has it, unless it says.
  for (auto& word : job_shell_argv(request.shell, request.command)) {
    spec.argv.push_back(std::move(word));
  }
  // On a GPU site every task on a node sees the devices its attempt holds there (and picks its
  // own by LOCAL_RANK, as under Slurm's --gres); none when it holds none there.
  std::map<std::string, std::string> task_env;
  if (assigns_gpus()) {
    auto held = run.gpus.find(nodes.at(static_cast<std::size_t>(node_rank)));
    task_env[local::kCudaVisibleDevices] =
        held == run.gpus.end() ? "" : local::device_list(held->second);
  }
  spec.env = job_environment(request, paths.work, nodes, task_env);
  spec.cwd = paths.work;
  spec.output_path = paths.output;
  spec.lock_path = task.lock;
  auto pid = local::spawn_detached(spec);
  if (!pid) return pid.error();
  // The agent runs now: a failure to record its pid must not fail the launch (the job would
  // run twice); readers learn the pid from the agent's start event when agent.pid is missing.
  (void)local::write_file_atomic(task.agent_pid, std::to_string(*pid) + "\n");
  return *pid;
}

Result<std::vector<TaskView>> LocalSite::task_views(const local::RunPaths& paths,
                                                    const local::StoredRequest& stored) const {
  const int n = task_count(stored.request);
  const int per_node = std::max(1, stored.request.tasks_per_node);
  std::vector<TaskView> views;
  for (int rank = 0; rank < n; ++rank) {
    local::TaskPaths task = local::task_paths(paths, rank);
    TaskView v;
    v.rank = rank;
    const auto node_rank = static_cast<std::size_t>(rank / per_node);
    if (node_rank < stored.nodes.size()) v.node = stored.nodes[node_rank];
    // Liveness first, then the events: the agent writes its exit record before it lets go of
    // its lock, so "dead" read before the events can never miss that record.
    auto alive = local::agent_alive(task.lock);
    if (!alive) return alive.error();
    v.alive = *alive;
    v.started = v.alive || local::path_exists(task.agent_pid) || local::path_exists(task.events);
    v.last_record_ms = local::modified_ms(task.events);
    // A task that hangs before its first record (its node froze at start) is silent since its
    // launch: its pid file is the launch's own record, so the heartbeat timeout judges it too.
    if (!v.last_record_ms && v.alive) v.last_record_ms = local::modified_ms(task.agent_pid);
    v.fault = local::read_task_fault(task.events);
    if (!v.alive) {
      local::AgentEvents events = local::read_agent_events(task.events);
      v.exited = events.exited;
      v.exit_code = events.exit_code;
      v.signal = events.signal;
      v.exit_at_ms = events.exit_at_ms;
    }
    views.push_back(std::move(v));
  }
  return views;
}

Result<void> LocalSite::kill_task(const local::TaskPaths& task, int sig) const {
  auto alive = local::agent_alive(task.lock);
  if (!alive) return alive.error();
  if (!*alive) return Ok{};  // the lock proves the pid is still ours before we signal it
  int pid = 0;
  if (auto text = local::read_file(task.agent_pid); text && !text->empty()) {
    pid = std::atoi(text->c_str());
  } else if (auto events = local::read_agent_events(task.events); events.agent_pid) {
    pid = *events.agent_pid;
  }
  if (pid <= 1) {
    return make_error(ErrorKind::internal, "task " + task.dir +
                                               " has a live agent but no recorded pid; "
                                               "signal its process group by hand");
  }
  // SIGTERM goes to the agent alone (it forwards it to the job, which may checkpoint); SIGKILL
  // goes to the whole process group so nothing the task started is left behind.
  pid_t target = sig == SIGKILL ? -pid : pid;
  if (kill(target, sig) != 0 && errno != ESRCH) {
    return make_error(ErrorKind::io, "cannot send signal " + std::to_string(sig) + " to " +
                                         std::to_string(target) + ": " + local::errno_text(errno));
  }
  return Ok{};
}

Result<void> LocalSite::kill_tasks(const local::RunPaths& paths, int count, int sig,
                                   std::chrono::milliseconds wait) const {
  for (int rank = 0; rank < count; ++rank) {
    if (auto k = kill_task(local::task_paths(paths, rank), sig); !k) return k.error();
  }
  auto deadline = std::chrono::steady_clock::now() + wait;
  for (int rank = 0; rank < count; ++rank) {
    std::string lock = local::task_paths(paths, rank).lock;
    while (std::chrono::steady_clock::now() < deadline) {
      auto alive = local::agent_alive(lock);
      if (!alive || !*alive) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  return Ok{};
}

Result<GangVerdict> LocalSite::judge_run(const local::RunPaths& paths,
                                         const local::StoredRequest& stored) {
  const int n = task_count(stored.request);
  auto decided = local::read_file(paths.gang_failure);
  std::optional<GangVerdict> verdict =
      decided && !decided->empty() ? failure_from_json(*decided) : std::nullopt;
  auto views = task_views(paths, stored);
  if (!views) return views.error();
  bool any_alive = false;
  for (const TaskView& t : *views) any_alive = any_alive || t.alive;
  if (!verdict) {
    const auto timeout_ms = static_cast<std::int64_t>(stored.request.heartbeat_timeout_s * 1000);
    GangVerdict v = judge_gang(*views, SystemClock().now_ms(), timeout_ms);
    if (v.phase != RunPhase::exited || v.failed_task < 0 || (n == 1 && !any_alive)) return v;
    // A gang ends with its first failure: keep it, then stop the rest (a silent task too).
    auto w = local::write_file_atomic(paths.gang_failure, failure_to_json(v).dump() + "\n");
    if (!w) return w.error();
    verdict = v;
  }
  if (any_alive) {
    if (auto k = kill_tasks(paths, n, SIGKILL, kSurvivorWait); !k) return k.error();
    auto again = task_views(paths, stored);
    if (!again) return again.error();
    for (const TaskView& t : *again) {
      if (t.alive) return GangVerdict{};  // still going down: running until it is gone
    }
  }
  return *verdict;
}

}  // namespace orch
