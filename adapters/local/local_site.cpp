#include "adapters/local/local_site.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "adapters/local/format_arg.h"
#include "adapters/local/process_spawn.h"
#include "adapters/local/run_dir.h"
#include "adapters/local/task_alerts.h"
#include "scheduler/common/clock.h"
#include "scheduler/model/launch_token.h"
#include "scheduler/model/workdir.h"

extern char** environ;

namespace {

// Where a failed setup leaves its marker (issue 40): in the job's own directory, which the
// job's user (local.run_as) may write; the run directory itself is the server's.
std::string setup_failed_path(const orch::local::RunPaths& paths) {
  return paths.work + "/." + std::string(orch::kSetupFailedFile);
}

}  // namespace

namespace orch {
namespace {

namespace fs = std::filesystem;
using local::errno_text;

constexpr std::size_t kMaxLineRead = 1 << 20;     // one observe reads at most 1 MiB of output
constexpr std::size_t kMaxOutputRead = 16 << 20;  // one read_output returns at most 16 MiB

std::string absolute_root(const std::string& root) {
  std::error_code ec;
  fs::path p = fs::absolute(root, ec);
  return ec ? root : p.lexically_normal().string();
}

// The job's own checkpoint directory (LaunchRequest::checkpoint_dir, ORCH_CHECKPOINT_DIR), made
// before its tasks start: its parents as usual, itself mode 0700. One that exists is kept (the
// job's earlier attempts saved there); anything else at that path, a symbolic link above all, is
// refused, since the job would write, and orchestrate list, wherever the link leads.
Result<void> make_checkpoint_dir(const std::string& dir) {
  if (dir.empty()) return Ok{};  // a launch recorded before jobs had one
  std::error_code ec;
  fs::create_directories(fs::path(dir).parent_path(), ec);
  if (ec) {
    return make_error(ErrorKind::io,
                      "cannot create the checkpoint directory " + dir + ": " + ec.message());
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return make_error(ErrorKind::io,
                      "cannot create the checkpoint directory " + dir + ": " + errno_text(errno));
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return make_error(ErrorKind::invalid, "the checkpoint directory " + dir +
                                              " exists and is not a directory (a symbolic "
                                              "link?); the job is not started there");
  }
  return Ok{};
}

// Whether a variable of the server's own environment reaches a job (kInheritedVariables, and
// the locale's LC_*).
bool inherited_by_jobs(const std::string& name) {
  for (const char* keep : kInheritedVariables) {
    if (name == keep) return true;
  }
  return name.rfind("LC_", 0) == 0;
}

}  // namespace

LocalSite::LocalSite(LocalSiteOptions options) : options_(std::move(options)) {
  options_.root = absolute_root(options_.root);
}

std::string LocalSite::run_dir(const std::string& token) const {
  return local::run_paths(options_.root, token).dir;
}

Result<void> LocalSite::check_up() const {
  if (local::path_exists(local::down_marker(options_.root))) {
    return make_error(ErrorKind::unreachable,
                      "site " + options_.name + " is not answering (simulated outage)");
  }
  return Ok{};
}

Result<SiteInventory> LocalSite::inventory() {
  if (auto up = check_up(); !up) return up.error();
  SiteInventory inv;
  for (const std::string& name : node_names()) {
    inv.nodes.push_back(
        NodeInfo{name, options_.gpus_per_node, true, "", /*gpus_busy: no other tenant*/ 0});
  }
  return inv;
}

std::vector<std::string> LocalSite::node_names() const {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(options_.nodes));
  for (int i = 0; i < options_.nodes; ++i) {
    names.push_back(options_.name + "-n" + std::to_string(i));
  }
  return names;
}

bool LocalSite::is_node_of_site(const std::string& node) const {
  for (int i = 0; i < options_.nodes; ++i) {
    if (node == options_.name + "-n" + std::to_string(i)) return true;
  }
  return false;
}

Result<std::vector<std::string>> LocalSite::assign_nodes(const LaunchRequest& request) const {
  if (request.nodes < 1 || request.gpus_per_node < 0) {
    return make_error(ErrorKind::invalid, "launch " + request.token + " asks for " +
                                              std::to_string(request.nodes) + " nodes and " +
                                              std::to_string(request.gpus_per_node) +
                                              " GPUs per node; nodes must be at least 1");
  }
  std::set<std::string> excluded(request.exclude_nodes.begin(), request.exclude_nodes.end());
  std::vector<std::string> nodes;
  // A resume from a copy on one node's own disk starts there (its first task on it); a gang's
  // survivors and the hot spares it takes come next.
  for (const std::string& node : pinned_nodes(request)) {
    if (excluded.count(node) != 0 || !is_node_of_site(node)) {
      return make_error(ErrorKind::invalid, "launch " + request.token + " must run on node " +
                                                node + ", which site " + options_.name +
                                                " does not have or excludes");
    }
    if (static_cast<int>(nodes.size()) < request.nodes) nodes.push_back(node);
  }
  for (int i = 0; i < options_.nodes && static_cast<int>(nodes.size()) < request.nodes; ++i) {
    std::string name = options_.name + "-n" + std::to_string(i);
    if (!excluded.count(name) && std::find(nodes.begin(), nodes.end(), name) == nodes.end()) {
      nodes.push_back(name);
    }
  }
  if (static_cast<int>(nodes.size()) < request.nodes) {
    return make_error(ErrorKind::invalid, "site " + options_.name + " has " +
                                              std::to_string(options_.nodes) + " nodes, " +
                                              std::to_string(nodes.size()) +
                                              " of them not excluded, but launch " + request.token +
                                              " needs " + std::to_string(request.nodes));
  }
  return nodes;
}

Result<LaunchResult> LocalSite::existing_launch(const std::string& token) const {
  local::RunPaths paths = local::run_paths(options_.root, token);
  LaunchResult result;
  if (local::path_exists(paths.request)) {
    auto text = local::read_file(paths.request);
    if (!text) return text.error();
    auto stored = local::request_from_json(*text, paths.request);
    if (!stored) return stored.error();
    result.nodes = stored->nodes;
  }
  if (auto pid = local::read_file(paths.agent_pid); pid && !pid->empty()) {
    result.site_job_id = pid->substr(0, pid->find('\n'));
  } else if (auto events = local::read_agent_events(paths.events); events.agent_pid) {
    result.site_job_id = std::to_string(*events.agent_pid);
  }
  return result;
}

Result<LaunchResult> LocalSite::adopted_launch(const std::string& token) const {
  auto existing = existing_launch(token);
  if (existing) existing->adopted = true;
  return existing;
}

// The environment of every task: the few variables of the server's that a program needs to run
// (kInheritedVariables: never its secrets, cloud keys or passphrases), then the request's, then
// ours (which win, so a job cannot be told a wrong token or run directory). The agent adds the
// task's place.
std::vector<std::string> LocalSite::job_environment(
    const LaunchRequest& request, const std::string& dir, const std::vector<std::string>& nodes,
    const std::map<std::string, std::string>& task_env) const {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos || !inherited_by_jobs(kv.substr(0, eq))) continue;
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : request.env) env[k] = v;
  // The secrets go to the processes' environment only (request.json keeps where they came from).
  for (const auto& [k, v] : request.secret_env) env[k] = v;
  std::string node_list;
  for (const std::string& n : nodes) node_list += (node_list.empty() ? "" : ",") + n;
  for (const auto& [k, v] : launch_token_env(request)) env[k] = v;
  env["ORCH_JOB_ID"] = std::to_string(request.job_id);
  env["ORCH_ATTEMPT"] = std::to_string(request.attempt_no);
  env["ORCH_RUN_DIR"] = dir;
  env["ORCH_GPUS"] = std::to_string(request.nodes * request.gpus_per_node);
  env["ORCH_NODES"] = node_list;
  env["ORCH_SITE"] = options_.name;
  // The job's code and setup (issue 40): what task_prelude reads.
  const std::string failed = setup_failed_path(local::run_paths(options_.root, request.token));
  for (const auto& [k, v] : workdir_env(request, failed)) env[k] = v;
  for (const auto& [k, v] : task_env) env[k] = v;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) {
    std::string kv = k;
    kv += '=';
    kv += v;
    out.push_back(std::move(kv));
  }
  return out;
}

Result<LaunchResult> LocalSite::start_tasks(const local::StoredRequest& run, bool adopted) {
  const LaunchRequest& request = run.request;
  local::RunPaths paths = local::run_paths(options_.root, request.token);
  if (!adopted) {
    // Written before any task starts: the devices are held from here on (held_gpus).
    if (auto w = local::write_file_atomic(paths.request, local::request_to_json(run)); !w) {
      return w.error();
    }
    note_replaced_devices(run);
  }
  std::error_code ec;
  fs::create_directories(paths.work, ec);
  if (ec) return make_error(ErrorKind::io, "cannot create " + paths.work + ": " + ec.message());
  if (auto ready = prepare_for_job_user(request, paths); !ready) return ready.error();
  // A server that crashed halfway through starting a gang left some tasks unstarted: start
  // those (and only those) under the same token.
  for (int rank = 0; rank < task_count(request); ++rank) {
    auto unstarted = task_never_started(local::task_paths(paths, rank));
    if (!unstarted) return unstarted.error();
    if (!*unstarted) continue;
    if (auto pid = start_task(run, rank); !pid) return pid.error();
  }
  auto launched = existing_launch(request.token);
  if (launched) launched->adopted = adopted;
  return launched;
}

Result<LaunchResult> LocalSite::launch(const LaunchRequest& request) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (auto up = check_up(); !up) return up.error();
  if (auto t = local::check_token(request.token); !t) return t.error();
  if (access(options_.agent_path.c_str(), X_OK) != 0) {
    return make_error(ErrorKind::invalid,
                      "site " + options_.name + ": the agent '" + options_.agent_path +
                          "' is not executable (" + errno_text(errno) +
                          "); build orchestrate-agent and point agent_path at it");
  }
  local::RunPaths paths = local::run_paths(options_.root, request.token);
  if (local::path_exists(paths.dir)) {
    // A server that crashed between creating the directory and starting the agent leaves a run
    // without pid, events or lock holder: finish that launch instead of reporting a ghost. One
    // that crashed halfway through a gang's tasks: start the rest, on the nodes it recorded.
    auto unstarted = never_started(paths);
    if (!unstarted) return unstarted.error();
    if (*unstarted || !local::path_exists(paths.request)) {
      auto placed = place(request);
      if (!placed) return placed.error();
      if (auto made = make_checkpoint_dir(request.checkpoint_dir); !made) return made.error();
      return start_tasks(*placed, false);
    }
    auto stored = stored_request(paths);
    if (!stored) return adopted_launch(request.token);  // damaged: adopt what runs, start nothing
    return start_tasks(*stored, true);
  }
  auto placed = place(request);
  if (!placed) return placed.error();
  if (auto made = make_checkpoint_dir(request.checkpoint_dir); !made) return made.error();
  std::error_code ec;
  fs::create_directories(local::runs_dir(options_.root), ec);
  if (ec) {
    // The site's storage root refuses it: the server's configuration (cluster check says more).
    return make_error(ErrorKind::misconfigured,
                      "cannot create " + local::runs_dir(options_.root) + ": " + ec.message());
  }
  // The server's alone: the job gets work/ inside it (and, with run_as, may only search it).
  if (mkdir(paths.dir.c_str(), 0700) != 0) {
    if (errno == EEXIST) return adopted_launch(request.token);  // another server process won
    return make_error(ErrorKind::io, "cannot create " + paths.dir + ": " + errno_text(errno));
  }
  return start_tasks(*placed, false);
}

Result<bool> LocalSite::never_started(const local::RunPaths& paths) const {
  return task_never_started(local::task_paths(paths, 0));  // task 0 keeps the run's own files
}

Result<std::optional<LaunchResult>> LocalSite::find(const std::string& token) {
  if (auto up = check_up(); !up) return up.error();
  if (auto t = local::check_token(token); !t) return t.error();
  local::RunPaths paths = local::run_paths(options_.root, token);
  if (!local::path_exists(paths.dir)) return std::optional<LaunchResult>{};
  // A run directory whose agent never started is a launch that did not happen: say so, and the
  // caller's launch() finishes it under the same token.
  auto unstarted = never_started(paths);
  if (!unstarted) return unstarted.error();
  if (*unstarted) return std::optional<LaunchResult>{};
  auto existing = existing_launch(token);
  if (!existing) return existing.error();
  return std::optional<LaunchResult>{std::move(*existing)};
}

Result<RunObservation> LocalSite::observe(const std::string& token, std::uint64_t output_offset) {
  if (auto up = check_up(); !up) return up.error();
  if (auto t = local::check_token(token); !t) return t.error();
  local::RunPaths paths = local::run_paths(options_.root, token);
  RunObservation obs;
  obs.next_offset = output_offset;
  if (!local::path_exists(paths.dir)) return obs;  // phase unknown

  // A damaged or missing request.json reads as one task on unnamed nodes: whether the run lives
  // and how it ended must still show.
  auto stored = stored_request(paths);
  local::StoredRequest request = stored ? *stored : local::StoredRequest{};
  if (!stored) request.request.heartbeat_timeout_s = 0;
  auto verdict = judge_run(paths, request);
  if (!verdict) return verdict.error();
  obs.phase = verdict->phase;
  if (verdict->phase == RunPhase::exited) {
    // Every task vanished: an outage that began while we looked killed them. That is the site
    // going down, not the job being killed, and callers must hear "unreachable" as for any call
    // during an outage.
    if (verdict->failed_task < 0 && verdict->exit->signal) {
      if (auto up = check_up(); !up) return up.error();
    }
    obs.exit = verdict->exit;
    // A failed setup (issue 40) says so in the run directory: the user's cause, its last lines.
    if (auto marker = local::read_file(setup_failed_path(paths)); marker && !marker->empty()) {
      ExitStatus s = setup_failed_exit(*marker);
      s.failed_node = obs.exit->failed_node;
      obs.exit = s;
    }
  }
  const bool alive = verdict->phase != RunPhase::exited;
  // Details only: a damaged request.json must not hide whether the run lives and how it ended.
  if (auto launched = existing_launch(token)) {
    obs.site_job_id = launched->site_job_id;
    obs.nodes = launched->nodes;
  }
  auto lines = local::read_output_lines(paths.output, output_offset, kMaxLineRead, !alive);
  if (!lines) return lines.error();
  obs.new_lines = std::move(lines->lines);
  obs.next_offset = lines->next_offset;
  // Issue 43: a save stalled past its bound, as the tasks' newest records state it.
  if (alive) obs.alerts = local::read_task_alerts(paths, task_count(request.request));
  return obs;
}

int LocalSite::run_task_count(const local::RunPaths& paths) const {
  auto stored = stored_request(paths);
  return stored ? task_count(stored->request) : 1;
}

Result<local::StoredRequest> LocalSite::stored_request(const local::RunPaths& paths) const {
  auto text = local::read_file(paths.request);
  if (!text) return text.error();
  return local::request_from_json(*text, paths.request);
}

Result<void> LocalSite::cancel(const std::string& token) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (auto up = check_up(); !up) return up.error();
  if (auto t = local::check_token(token); !t) return t.error();
  local::RunPaths paths = local::run_paths(options_.root, token);
  if (!local::path_exists(paths.dir)) return Ok{};
  const int tasks = run_task_count(paths);
  // The first cancel time is kept on disk so that escalation survives a server restart.
  auto first = local::read_file(paths.cancel_requested);
  if (!first || first->empty()) {
    if (auto w = local::write_file_atomic(paths.cancel_requested,
                                          std::to_string(SystemClock().now_ms()) + "\n");
        !w) {
      return w.error();
    }
    return kill_tasks(paths, tasks, SIGTERM, std::chrono::milliseconds(0));
  }
  std::int64_t first_ms = 0;
  try {
    first_ms = std::stoll(*first);
  } catch (const std::exception&) {
    first_ms = 0;  // unreadable: treat the grace as spent
  }
  if (SystemClock().now_ms() - first_ms >= options_.cancel_grace_ms) {
    return kill_tasks(paths, tasks, SIGKILL, std::chrono::milliseconds(0));
  }
  return Ok{};
}

Result<void> LocalSite::signal(const std::string& token, const std::string& signal) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (auto up = check_up(); !up) return up.error();
  if (auto t = local::check_token(token); !t) return t.error();
  int sig = 0;
  if (signal == "USR1") sig = SIGUSR1;
  if (signal == "USR2") sig = SIGUSR2;
  if (signal == "INT") sig = SIGINT;
  if (signal == "HUP") sig = SIGHUP;
  if (sig == 0) {
    return make_error(ErrorKind::invalid,
                      "cannot send signal \"" + signal + "\": expected USR1, USR2, INT or HUP");
  }
  local::RunPaths paths = local::run_paths(options_.root, token);
  if (!local::path_exists(paths.dir)) return Ok{};
  return kill_tasks(paths, run_task_count(paths), sig, std::chrono::milliseconds(0));
}

Result<std::string> LocalSite::read_output(const std::string& token, std::uint64_t offset,
                                           std::size_t max_bytes) {
  if (auto up = check_up(); !up) return up.error();
  if (auto t = local::check_token(token); !t) return t.error();
  local::RunPaths paths = local::run_paths(options_.root, token);
  if (!local::path_exists(paths.dir)) {
    return make_error(ErrorKind::not_found,
                      "site " + options_.name + " has no run with token " + token);
  }
  return local::read_range(paths.output, offset, std::min(max_bytes, kMaxOutputRead));
}

Result<void> LocalSite::set_outage(bool down) {
  std::lock_guard<std::mutex> guard(mutex_);
  std::string marker = local::down_marker(options_.root);
  if (!down) {
    if (unlink(marker.c_str()) != 0 && errno != ENOENT) {
      return make_error(ErrorKind::io, "cannot remove " + marker + ": " + errno_text(errno));
    }
    return Ok{};
  }
  std::error_code ec;
  fs::create_directories(options_.root, ec);
  if (auto w = local::write_file_atomic(marker, std::to_string(SystemClock().now_ms()) + "\n");
      !w) {
    return w.error();
  }
  // An outage kills the work, as a real site losing power would.
  std::vector<std::string> locks;
  for (const auto& entry : fs::directory_iterator(local::runs_dir(options_.root), ec)) {
    std::string token = entry.path().filename().string();
    if (!entry.is_directory() || !local::check_token(token)) continue;
    local::RunPaths paths = local::run_paths(options_.root, token);
    const int tasks = run_task_count(paths);
    if (auto k = kill_tasks(paths, tasks, SIGKILL, std::chrono::milliseconds(0)); !k) {
      return k.error();
    }
    for (int rank = 0; rank < tasks; ++rank) locks.push_back(local::task_paths(paths, rank).lock);
  }
  // Wait (briefly) until the agents are really gone, so that the outage is complete when we
  // return and nothing reports "running" once the site is back.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (const std::string& lock : locks) {
    while (std::chrono::steady_clock::now() < deadline) {
      auto alive = local::agent_alive(lock);
      if (!alive || !*alive) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  return Ok{};
}

Result<std::unique_ptr<ClusterPort>> make_local_site(const ClusterSpec& cluster,
                                                     const SiteContext& context) {
  LocalSiteOptions o;
  o.name = cluster.name;
  o.root = cluster.storage_root;
  o.nodes = cluster.nodes;
  o.gpus_per_node = cluster.gpus_per_node;
  o.accelerator = cluster.accelerator;
  o.agent_path = context.agent_path;
  o.run_as = cluster.local.run_as;
  o.checkpoints_dir = cluster.checkpoints_dir();
  o.datasets_dir = cluster.datasets_dir();
  o.containers = cluster.local.containers;
  o.live_watch = cluster.live_watch;
  auto site = std::make_unique<LocalSite>(o);
  if (auto ready = site->prepare_storage(); !ready) return ready.error();
  site->warn_about_gpus();  // serve says so on stderr when the machine's count differs
  return std::unique_ptr<ClusterPort>(std::move(site));
}

}  // namespace orch
