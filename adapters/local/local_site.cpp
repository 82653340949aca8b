#include "adapters/local/local_site.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "adapters/local/format_arg.h"
#include "adapters/local/process_spawn.h"
#include "adapters/local/run_dir.h"

extern char** environ;

namespace orch {
namespace {

namespace fs = std::filesystem;
using local::errno_text;

constexpr std::size_t kMaxLineRead = 1 << 20;     // one observe reads at most 1 MiB of output
constexpr std::size_t kMaxOutputRead = 16 << 20;  // one read_output returns at most 16 MiB

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string absolute_root(const std::string& root) {
  std::error_code ec;
  fs::path p = fs::absolute(root, ec);
  return ec ? root : p.lexically_normal().string();
}

// The environment of the job: the server's, then the request's, then ours (which win, so a job
// cannot be told a wrong token or run directory).
std::vector<std::string> job_environment(const LaunchRequest& request, const std::string& dir,
                                         const std::string& site,
                                         const std::vector<std::string>& nodes) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : request.env) env[k] = v;
  std::string node_list;
  for (const std::string& n : nodes) node_list += (node_list.empty() ? "" : ",") + n;
  env["ORCH_TOKEN"] = request.token;
  env["ORCH_JOB_ID"] = std::to_string(request.job_id);
  env["ORCH_ATTEMPT"] = std::to_string(request.attempt_no);
  env["ORCH_RUN_DIR"] = dir;
  env["ORCH_GPUS"] = std::to_string(request.nodes * request.gpus_per_node);
  env["ORCH_NODES"] = node_list;
  env["ORCH_SITE"] = site;
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
    inv.nodes.push_back(NodeInfo{name, options_.gpus_per_node, true, ""});
  }
  return inv;
}

std::vector<std::string> LocalSite::node_names() const {
  std::vector<std::string> names;
  for (int i = 0; i < options_.nodes; ++i) {
    names.push_back(options_.name + "-n" + std::to_string(i));
  }
  return names;
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
  for (int i = 0; i < options_.nodes && static_cast<int>(nodes.size()) < request.nodes; ++i) {
    std::string name = options_.name + "-n" + std::to_string(i);
    if (!excluded.count(name)) nodes.push_back(name);
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

Result<LaunchResult> LocalSite::start_agent(const LaunchRequest& request,
                                            const std::vector<std::string>& nodes) {
  local::RunPaths paths = local::run_paths(options_.root, request.token);
  local::StoredRequest stored{request, nodes, now_ms()};
  if (auto w = local::write_file_atomic(paths.request, local::request_to_json(stored)); !w) {
    return w.error();
  }
  local::SpawnSpec spec;
  spec.argv = {options_.agent_path,
               "run",
               "--events",
               paths.events,
               "--lock-fd",
               std::to_string(local::kAgentLockFd),
               "--hang-after-s",
               local::format_arg(request.hang_after_s),
               "--",
               "/bin/sh",
               "-c",
               request.command};
  std::error_code ec;
  fs::create_directories(paths.work, ec);
  if (ec) return make_error(ErrorKind::io, "cannot create " + paths.work + ": " + ec.message());
  spec.env = job_environment(request, paths.work, options_.name, nodes);
  spec.cwd = paths.work;
  spec.output_path = paths.output;
  spec.lock_path = paths.lock;
  auto pid = local::spawn_detached(spec);
  if (!pid) return pid.error();
  // The agent runs now, so the launch succeeded whatever happens next: a failure to record the
  // pid must not be reported as a failed launch (the job would run twice). find() and observe()
  // learn the pid from the agent's start event when agent.pid is missing.
  (void)local::write_file_atomic(paths.agent_pid, std::to_string(*pid) + "\n");
  return LaunchResult{std::to_string(*pid), nodes};
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
    // without pid, events or lock holder: finish that launch instead of reporting a ghost.
    auto unstarted = never_started(paths);
    if (!unstarted) return unstarted.error();
    if (!*unstarted) return adopted_launch(request.token);
    auto nodes = assign_nodes(request);
    if (!nodes) return nodes.error();
    return start_agent(request, *nodes);
  }
  auto nodes = assign_nodes(request);
  if (!nodes) return nodes.error();
  std::error_code ec;
  fs::create_directories(local::runs_dir(options_.root), ec);
  if (ec) {
    return make_error(ErrorKind::io,
                      "cannot create " + local::runs_dir(options_.root) + ": " + ec.message());
  }
  if (mkdir(paths.dir.c_str(), 0755) != 0) {
    if (errno == EEXIST) return adopted_launch(request.token);  // another server process won
    return make_error(ErrorKind::io, "cannot create " + paths.dir + ": " + errno_text(errno));
  }
  return start_agent(request, *nodes);
}

Result<bool> LocalSite::never_started(const local::RunPaths& paths) const {
  auto alive = local::agent_alive(paths.lock);
  if (!alive) return alive.error();
  return !*alive && !local::path_exists(paths.agent_pid) && !local::path_exists(paths.events);
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

  // Liveness first, then the events: the agent writes its exit record before it lets go of the
  // lock, so "dead" read before the events can never miss that record.
  auto alive = local::agent_alive(paths.lock);
  if (!alive) return alive.error();
  if (*alive) {
    obs.phase = RunPhase::running;
  } else {
    obs.phase = RunPhase::exited;
    local::AgentEvents events = local::read_agent_events(paths.events);
    ExitStatus exit;
    if (events.exited) {
      exit.exit_code = events.exit_code;
      exit.signal = events.signal;
      if (exit.signal) exit.detail = "killed by signal " + std::to_string(*exit.signal);
    } else {
      // An outage that began while we looked killed it: that is the site going down, not the
      // job being killed, and callers must hear "unreachable" as for any call during an outage.
      if (auto up = check_up(); !up) return up.error();
      exit.signal = SIGKILL;
      exit.detail = "agent vanished without an exit record";
    }
    obs.exit = exit;
  }
  // Details only: a damaged request.json must not hide whether the run lives and how it ended.
  if (auto launched = existing_launch(token)) {
    obs.site_job_id = launched->site_job_id;
    obs.nodes = launched->nodes;
  }
  auto lines = local::read_output_lines(paths.output, output_offset, kMaxLineRead, !*alive);
  if (!lines) return lines.error();
  obs.new_lines = std::move(lines->lines);
  obs.next_offset = lines->next_offset;
  return obs;
}

Result<void> LocalSite::kill_group(const std::string& token, int sig) const {
  auto launched = existing_launch(token);
  if (!launched) return launched.error();
  int pid = 0;
  try {
    pid = std::stoi(launched->site_job_id);
  } catch (const std::exception&) {
    pid = 0;
  }
  if (pid <= 1) {
    return make_error(ErrorKind::internal, "run " + run_dir(token) +
                                               " has a live agent but no recorded pid; "
                                               "signal its process group by hand");
  }
  // SIGTERM goes to the agent alone (it forwards it to the job, which may checkpoint); SIGKILL
  // goes to the whole process group so nothing the job started is left behind.
  pid_t target = sig == SIGKILL ? -pid : pid;
  if (kill(target, sig) != 0 && errno != ESRCH) {
    return make_error(ErrorKind::io, "cannot send signal " + std::to_string(sig) + " to " +
                                         std::to_string(target) + ": " + errno_text(errno));
  }
  return Ok{};
}

Result<void> LocalSite::cancel(const std::string& token) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (auto up = check_up(); !up) return up.error();
  if (auto t = local::check_token(token); !t) return t.error();
  local::RunPaths paths = local::run_paths(options_.root, token);
  if (!local::path_exists(paths.dir)) return Ok{};
  auto alive = local::agent_alive(paths.lock);
  if (!alive) return alive.error();
  if (!*alive) return Ok{};  // the lock proves the pid is still ours before we signal it
  // The first cancel time is kept on disk so that escalation survives a server restart.
  auto first = local::read_file(paths.cancel_requested);
  if (!first || first->empty()) {
    if (auto w = local::write_file_atomic(paths.cancel_requested, std::to_string(now_ms()) + "\n");
        !w) {
      return w.error();
    }
    return kill_group(token, SIGTERM);
  }
  std::int64_t first_ms = 0;
  try {
    first_ms = std::stoll(*first);
  } catch (const std::exception&) {
    first_ms = 0;  // unreadable: treat the grace as spent
  }
  if (now_ms() - first_ms >= options_.cancel_grace_ms) return kill_group(token, SIGKILL);
  return Ok{};
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
  if (auto w = local::write_file_atomic(marker, std::to_string(now_ms()) + "\n"); !w) {
    return w.error();
  }
  // An outage kills the work, as a real site losing power would.
  std::vector<std::string> killed;
  for (const auto& entry : fs::directory_iterator(local::runs_dir(options_.root), ec)) {
    std::string token = entry.path().filename().string();
    if (!entry.is_directory() || !local::check_token(token)) continue;
    auto alive = local::agent_alive(local::run_paths(options_.root, token).lock);
    if (!alive || !*alive) continue;
    if (auto k = kill_group(token, SIGKILL); !k) return k.error();
    killed.push_back(token);
  }
  // Wait (briefly) until the agents are really gone, so that the outage is complete when we
  // return and nothing reports "running" once the site is back.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (const std::string& token : killed) {
    std::string lock = local::run_paths(options_.root, token).lock;
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
  o.agent_path = context.agent_path;
  return std::unique_ptr<ClusterPort>(std::make_unique<LocalSite>(o));
}

}  // namespace orch
