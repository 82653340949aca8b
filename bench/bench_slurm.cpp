// Issue 3's figures on the project's real Slurm lab (tests/lab/slurm): real slurmctld/slurmd,
// real sshd login nodes, the real `orchestrate serve`. Each measurement prints a table with a
// baseline measured in the same run:
//
//   1. failover: a node of alpha crashes under a running toy trainer (slurmd, its stepd's and
//      the job's processes SIGKILLed). From the kill: when Slurm marks the node DOWN (its own
//      detection, the baseline), when orchestrate ends the attempt (REST says exited), when the
//      replacement runs on beta. A fresh lab and server per run.
//   2. launches/s: SlurmSite::launch over one SSH connection, against the naive way, one new
//      OpenSSH `ssh` process per launch doing the same mkdir, script upload and sbatch.
//   3. polls/s: SlurmSite::observe and a raw SshSession::exec("squeue ...") over one
//      connection, against one new `ssh ... squeue` process per poll.
//
//   build/bin/bench_slurm [--runs N] [--launches N] [--polls N] [--poll-interval-ms MS]
//                         [--backoff-s S] [--slurmd-timeout S]
//
// N = 0 skips a measurement. --poll-interval-ms is the site worker's poll in the failover runs,
// --backoff-s the job's restart.backoff.initial_s (0.1, as in the Slurm end-to-end tests; the
// default of a job spec is 10), --slurmd-timeout the labs' SlurmdTimeout (LAB_SLURMD_TIMEOUT). Runs
// as root (the lab does). Every lab and server it starts is torn down on the way out, on errors and
// on SIGINT/SIGTERM too (loops stop at the next check).
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/slurm/batch_script.h"
#include "adapters/slurm/slurm_parse.h"
#include "adapters/slurm/slurm_site.h"
#include "adapters/ssh/shell_quote.h"
#include "adapters/ssh/ssh_session.h"
#include "tests/harness/slurm_lab.h"
#include "tests/integration/e2e/server_process.h"

using namespace orch;  // NOLINT: a benchmark's main file
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

volatile std::sig_atomic_t g_stop = 0;

struct Options {
  int runs = 5;
  int launches = 40;
  int polls = 100;
  int poll_ms = 200;       // the site worker's poll_interval_ms in the failover runs
  double backoff_s = 0.1;  // the job's restart.backoff.initial_s
  int slurmd_timeout = 0;  // LAB_SLURMD_TIMEOUT for the failover labs; 0: the lab's default
};

void on_signal(int /*sig*/) {
  g_stop = 1;
}

bool stopping() {
  return g_stop != 0;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---- statistics ---------------------------------------------------------------------------

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double max_of(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

// Nearest-rank percentile: with 5 samples p95 is the largest.
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// ---- processes ----------------------------------------------------------------------------

// The NUL-separated environment of a live (non-zombie) process; empty when gone or unreadable.
std::vector<std::string> process_env(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto paren = text.rfind(") ");
  if (paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] == 'Z') return {};
  std::ifstream in("/proc/" + pid + "/environ", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> env;
  std::size_t start = 0;
  while (start < raw.size()) {
    std::size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    env.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  return env;
}

// PIDs of live processes (not this one) whose environment satisfies `match`.
template <typename Match>
std::vector<pid_t> processes_where(Match match) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (!proc) return found;
  while (dirent* e = readdir(proc)) {
    std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = std::atoi(name.c_str());
    if (pid == getpid()) continue;
    auto env = process_env(name);
    if (!env.empty() && match(env)) found.push_back(pid);
  }
  closedir(proc);
  return found;
}

bool has(const std::vector<std::string>& env, const std::string& var) {
  return std::find(env.begin(), env.end(), var) != env.end();
}

bool has_prefix(const std::vector<std::string>& env, const std::string& prefix) {
  return std::any_of(env.begin(), env.end(),
                     [&](const std::string& v) { return v.rfind(prefix, 0) == 0; });
}

// Job processes of one node of one cluster: what a crashed machine takes with it.
std::vector<pid_t> job_processes_on(const std::string& slurm_conf, const std::string& node) {
  return processes_where([&](const std::vector<std::string>& env) {
    return has_prefix(env, "SLURM_JOB_ID=") && has(env, "SLURMD_NODENAME=" + node) &&
           has(env, "SLURM_CONF=" + slurm_conf);
  });
}

std::size_t kill_all(const std::vector<pid_t>& pids) {
  for (pid_t p : pids) kill(p, SIGKILL);
  return pids.size();
}

// A lab that is always torn down: down.sh --purge by the SlurmLab destructor, then whatever
// still carries the lab's marker in its environment is SIGKILLed (there should be nothing).
class LabGuard {
 public:
  explicit LabGuard(std::unique_ptr<test::SlurmLab> lab) : lab_(std::move(lab)) {}
  ~LabGuard() {
    if (!lab_) return;
    const std::string dir = lab_->dir();
    lab_.reset();
    auto left = processes_where([&](const std::vector<std::string>& env) {
      return has(env, "ORCH_LAB_DIR=" + dir) || has_prefix(env, "SLURM_CONF=" + dir + "/");
    });
    if (!left.empty()) {
      std::cerr << "bench_slurm: " << kill_all(left) << " process(es) of lab " << dir
                << " outlived down.sh; SIGKILLed\n";
    }
  }
  LabGuard(const LabGuard&) = delete;
  LabGuard& operator=(const LabGuard&) = delete;
  test::SlurmLab& operator*() const { return *lab_; }
  test::SlurmLab* operator->() const { return lab_.get(); }

 private:
  std::unique_ptr<test::SlurmLab> lab_;
};

std::unique_ptr<LabGuard> start_lab(const std::vector<std::string>& names) {
  auto t0 = Clock::now();
  auto lab = test::SlurmLab::start(names);
  if (!lab) throw std::runtime_error("the Slurm lab did not come up: " + lab.error().message);
  std::fprintf(stderr, "  lab %s up in %.1f s\n", (*lab)->dir().c_str(), seconds_since(t0));
  return std::make_unique<LabGuard>(std::move(*lab));
}

// The value of KEY in `scontrol show config` ("KEY = value"), or "?".
std::string slurm_config(const test::SlurmLab& lab, const std::string& cluster,
                         const std::string& key) {
  auto out = lab.slurm(cluster, {"scontrol", "show", "config"});
  if (!out) return "?";
  std::stringstream ss(*out);
  for (std::string line; std::getline(ss, line);) {
    if (line.rfind(key + " ", 0) != 0) continue;
    auto eq = line.find("= ");
    if (eq != std::string::npos) return line.substr(eq + 2);
  }
  return "?";
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0;
  in >> one;
  return one;
}

// When slurmctld first logged a line containing `what` about `node` at or after `since`, in
// seconds after `since`: its log has millisecond timestamps ("[2026-11-30T09:33:54.442] ...",
// local time), finer than any poll of scontrol.
std::optional<double> logged_after(const std::string& log, const std::string& node,
                                   const std::string& what,
                                   std::chrono::system_clock::time_point since) {
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(node) == std::string::npos || line.find(what) == std::string::npos) continue;
    std::tm tm{};
    int ms = 0;
    if (std::sscanf(line.c_str(), "[%d-%d-%dT%d:%d:%d.%d]", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
      continue;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    const auto at = std::chrono::system_clock::from_time_t(std::mktime(&tm)) + milliseconds(ms);
    const double after = std::chrono::duration<double>(at - since).count();
    if (after >= -0.001) return after;
  }
  return std::nullopt;
}

// ---- 1. failover -------------------------------------------------------------------------

struct FailoverRun {
  bool ok = false;
  std::string failure;
  double kill_s = 0;              // how long kill_node itself took
  std::size_t job_processes = 0;  // the job's processes on the node before the kill
  std::size_t survivors = 0;      // ... and still alive after kill_node (SIGKILLed then)
  std::optional<double> not_responding, down, job_final;  // Slurm's view, polled
  std::optional<double> logged_down;  // slurmctld.log's "setting DOWN", to the millisecond
  double slurm_poll_ms = 0;           // the Slurm poller's achieved period
  std::string job_final_state;
  std::string node_states;  // each State= the node went through, with its time ("MIXED@0.1 ...")
  std::optional<double> detected, placed, recovered;  // orchestrate's view (REST)
  std::string cause;
};

std::string cluster_yaml(const test::LabCluster& c, int poll_ms) {
  return "  - name: " + c.name +
         "\n    provider: slurm\n    nodes: " + std::to_string(c.nodes.size()) +
         "\n    gpus_per_node: 8\n    accelerator: cpu-slot\n    peak_tflops: 0.001\n"
         "    unreachable_grace_s: 20\n    poll_interval_ms: " +
         std::to_string(poll_ms) + "\n    storage: {root: " + c.storage_root +
         ", checkpoints: " + c.storage_root + "/ckpt}\n    ssh: {host: " + c.host +
         ", port: " + std::to_string(c.ssh_port) + ", user: " + c.user +
         ", key_file: " + c.key_file + ", known_hosts: " + c.known_hosts +
         ", connect_timeout_s: 2, command_timeout_s: 20}\n";
}

// The toy trainer, a checkpoint every 10 steps (kept: the replacement resumes from one),
// long enough to outlive the measurement; restarts after 0.1 s.
std::string job_yaml(double backoff_s) {
  return "name: failover\ncommand: " ORCH_BIN_DIR
         "/toy_trainer --dim 32 --batch 16 --steps 100000 --step-delay-ms 40 --ckpt-every 10"
         " --keep-ckpts 0 --ckpt-dir \"$ORCH_CHECKPOINT_ROOT/failover\"\n"
         "resources: {nodes: 1, gpus_per_node: 2}\n"
         "model: {parameters: 1024}\n"
         "checkpoint: {interval_steps: 10}\n"
         "restart: {max_infra_restarts: 3, max_user_restarts: 0, backoff: {initial_s: " +
         std::to_string(backoff_s) + ", max_s: " + std::to_string(std::max(1.0, backoff_s)) +
         "}}\n"
         "placement: {preferred: [alpha]}\n";
}

// Joins a poller thread however the scope ends; on an exception it asks the poller to stop first.
class JoinOnExit {
 public:
  JoinOnExit(std::thread& thread, std::atomic<bool>& quit) : thread_(thread), quit_(quit) {}
  ~JoinOnExit() {
    if (std::uncaught_exceptions() > 0) quit_ = true;
    if (thread_.joinable()) thread_.join();
  }
  JoinOnExit(const JoinOnExit&) = delete;
  JoinOnExit& operator=(const JoinOnExit&) = delete;

 private:
  std::thread& thread_;
  std::atomic<bool>& quit_;
};

// Polls `done` every `every` until it is true, the deadline passes or the bench is stopped.
template <typename Done>
bool wait_for(Done done, milliseconds timeout, milliseconds every = milliseconds(100)) {
  const auto deadline = Clock::now() + timeout;
  while (!stopping() && Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(every);
  }
  return false;
}

struct Intervals {
  std::string slurmd_timeout, message_timeout, scheduler_parameters;
};

FailoverRun failover_once(const Options& o, Intervals& intervals) {
  FailoverRun run;
  auto lab = start_lab({"alpha", "beta"});
  if (intervals.slurmd_timeout.empty()) {
    intervals.slurmd_timeout = slurm_config(**lab, "alpha", "SlurmdTimeout");
    intervals.message_timeout = slurm_config(**lab, "alpha", "MessageTimeout");
    intervals.scheduler_parameters = slurm_config(**lab, "alpha", "SchedulerParameters");
  }
  e2e::TempDir dir;
  const std::string config = dir.path() + "/clusters.yaml";
  const std::string log = dir.path() + "/server.log";
  e2e::write_file(config, "clusters:\n" + cluster_yaml((*lab)->cluster("alpha"), o.poll_ms) +
                              cluster_yaml((*lab)->cluster("beta"), o.poll_ms));
  std::string error;
  auto server = e2e::ServerProcess::start(config, dir.path() + "/state", log, error);
  if (!server) {
    run.failure = "orchestrate serve did not start: " + error;
    return run;
  }
  const std::string url = server->url();
  auto fail = [&](const std::string& why) {
    run.failure = why;
    std::string text = e2e::read_file(log);
    if (text.size() > 3000) text = text.substr(text.size() - 3000);
    std::cerr << "  run failed: " << why << "\n  ---- server log (tail):\n" << text << "\n";
    server->stop();
    return run;
  };

  HttpResponse r =
      e2e::call(url, "POST", "/api/v1/jobs", job_yaml(o.backoff_s), "application/yaml");
  json created = json::parse(r.body, nullptr, false);
  if (r.status != 201 || !created.is_object() || !created["id"].is_number_integer()) {
    return fail("submit: " + std::to_string(r.status) + " " + r.body);
  }
  const std::string job_path = "/api/v1/jobs/" + std::to_string(created["id"].get<long>());
  const bool started = wait_for(
      [&] {
        json j = e2e::get_json(url, job_path);
        return j.is_object() && j["state"] == "running" && j["cluster"] == "alpha" &&
               j["step"].is_number() && j["step"].get<int>() >= 25 &&
               !j["last_checkpoint"].is_null();
      },
      milliseconds(90000));
  if (!started) {
    return fail(stopping() ? "interrupted"
                           : "the job did not run on alpha past step 25 with a checkpoint");
  }
  json before = e2e::get_json(url, job_path + "/attempts");
  if (!before.is_object() || before["attempts"].size() != 1) return fail("not one attempt");
  const std::string token = before["attempts"][0].value("token", "");
  const test::LabCluster& alpha = (*lab)->cluster("alpha");
  const std::string node = alpha.nodes.at(0);

  run.job_processes = job_processes_on(alpha.slurm_conf, node).size();
  // The crash. Time runs from just before the kill (conservative: the kill itself counts).
  const auto wall0 = std::chrono::system_clock::now();
  const auto t0 = Clock::now();
  if (auto k = (*lab)->kill_node("alpha", node); !k) return fail("kill_node: " + k.error().message);
  run.kill_s = seconds_since(t0);
  // On a real machine the job's processes die with it; kill-node kills the stepd's descendants,
  // this catches anything that escaped them (there should be nothing).
  run.survivors = kill_all(job_processes_on(alpha.slurm_conf, node));

  const auto deadline = t0 + milliseconds(120000);
  std::mutex mu;  // guards run's optionals between the two pollers
  auto at = [&](std::optional<double>& slot) {
    std::lock_guard<std::mutex> lock(mu);
    if (!slot) slot = seconds_since(t0);
  };
  // Slurm's view every 100 ms plus the two commands' time: the node's state, the job's state.
  std::atomic<bool> quit{false};
  std::thread slurm_poller([&] {
    bool node_down = false;
    bool job_final = false;
    std::string last_state;
    int rounds = 0;
    while (!stopping() && !quit && Clock::now() < deadline && !(node_down && job_final)) {
      if (!node_down) {
        if (auto s = (*lab)->node_state("alpha", node)) {
          if (*s != last_state) {
            char when[32];
            std::snprintf(when, sizeof when, "@%.2f", seconds_since(t0));
            last_state = *s;
            std::lock_guard<std::mutex> lock(mu);
            run.node_states += (run.node_states.empty() ? "" : " ") + *s + when;
          }
          if (s->find("NOT_RESPONDING") != std::string::npos || s->find('*') != std::string::npos)
            at(run.not_responding);
          if (s->rfind("DOWN", 0) == 0) {
            at(run.not_responding);
            at(run.down);
            node_down = true;
          }
        }
      }
      if (!job_final) {
        auto q =
            (*lab)->slurm("alpha", {"squeue", "-h", "-t", "all", "--name=" + token, "-o", "%T"});
        std::string state = q ? first_line(*q) : "";
        if (!state.empty() && state != "RUNNING" && state != "COMPLETING") {
          at(run.job_final);
          std::lock_guard<std::mutex> lock(mu);
          run.job_final_state = state;
          job_final = true;
        }
      }
      ++rounds;
      std::this_thread::sleep_for(milliseconds(100));
    }
    std::lock_guard<std::mutex> lock(mu);
    run.slurm_poll_ms = rounds > 0 ? 1000.0 * seconds_since(t0) / rounds : 0;
  });
  JoinOnExit join_poller(slurm_poller, quit);
  // orchestrate's view every 50 ms, through REST as any client sees it.
  while (!stopping() && Clock::now() < deadline) {
    json a = e2e::get_json(url, job_path + "/attempts");
    if (a.is_object()) {
      for (const auto& att : a["attempts"]) {
        if (att.value("token", "") == token && att.value("state", "") == "exited" &&
            !run.detected) {
          at(run.detected);
          run.cause = att.value("cause", "");
        }
        if (att.value("cluster", "") == "beta") at(run.placed);
      }
    }
    json j = e2e::get_json(url, job_path);
    if (j.is_object() && j["state"] == "running" && j["cluster"] == "beta") {
      at(run.recovered);
      break;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  slurm_poller.join();
  const std::string ctld_log = (*lab)->dir() + "/alpha/log/slurmctld.log";
  run.logged_down = logged_after(ctld_log, node, "setting DOWN", wall0);
  if (!run.recovered) {
    return fail(stopping() ? "interrupted"
                           : "no replacement running on beta within 120 s of the kill");
  }
  run.ok = true;
  server->stop();
  return run;
}

std::string opt(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *v);
  return buf;
}

void bench_failover(const Options& o) {
  std::printf("\n== 1. node crash under a running job: detection and recovery (%d runs) ==\n",
              o.runs);
  std::fflush(stdout);
  if (o.slurmd_timeout > 0) {
    // SlurmLab::start runs up.sh with this process's environment.
    setenv("LAB_SLURMD_TIMEOUT", std::to_string(o.slurmd_timeout).c_str(), 1);
  }
  std::vector<FailoverRun> done;
  Intervals intervals;
  for (int i = 1; i <= o.runs && !stopping(); ++i) {
    std::fprintf(stderr, "failover run %d/%d (load %.2f)\n", i, o.runs, load_average());
    FailoverRun r;
    try {
      r = failover_once(o, intervals);
    } catch (const std::exception& e) {
      r.failure = e.what();
    }
    std::printf(
        "run %d: %s kill_node %.2fs, job processes %zu, left by it %zu | polled: NOT_RESPONDING "
        "%s, "
        "DOWN %s, job %s %s | slurmctld.log: setting DOWN %s | orchestrate: exited(%s) %s, placed "
        "on "
        "beta %s, running on beta %s (s)\n",
        i, r.ok ? "ok  " : "FAIL", r.kill_s, r.job_processes, r.survivors,
        opt(r.not_responding).c_str(), opt(r.down).c_str(),
        r.job_final_state.empty() ? "?" : r.job_final_state.c_str(), opt(r.job_final).c_str(),
        opt(r.logged_down).c_str(), r.cause.c_str(), opt(r.detected).c_str(), opt(r.placed).c_str(),
        opt(r.recovered).c_str());
    std::printf("        scontrol State=: %s\n", r.node_states.c_str());
    if (!r.ok) std::printf("        failed: %s\n", first_line(r.failure).c_str());
    std::fflush(stdout);
    done.push_back(r);
  }
  std::vector<double> nr, ldown, down, jf, det, placed, rec, det_share, rec_share, period;
  for (const auto& r : done) {
    if (r.not_responding) nr.push_back(*r.not_responding);
    if (r.logged_down) ldown.push_back(*r.logged_down);
    if (r.down) down.push_back(*r.down);
    if (r.job_final) jf.push_back(*r.job_final);
    if (r.detected) det.push_back(*r.detected);
    if (r.placed) placed.push_back(*r.placed);
    if (r.recovered) rec.push_back(*r.recovered);
    if (r.detected && r.logged_down) det_share.push_back(*r.detected - *r.logged_down);
    if (r.recovered && r.detected) rec_share.push_back(*r.recovered - *r.detected);
    if (r.slurm_poll_ms > 0) period.push_back(r.slurm_poll_ms);
  }
  std::printf("\n%-60s %8s %8s %5s\n", "seconds from the kill until", "median", "max", "runs");
  auto row = [](const char* name, const std::vector<double>& v) {
    if (v.empty()) {
      std::printf("%-60s %8s %8s %5d\n", name, "-", "-", 0);
    } else {
      std::printf("%-60s %8.2f %8.2f %5zu\n", name, median(v), max_of(v), v.size());
    }
  };
  row("Slurm: scontrol shows the node NOT_RESPONDING (polled)", nr);
  row("Slurm: scontrol shows the node DOWN (polled)", down);
  row("Slurm: node set DOWN (slurmctld.log, ms; baseline)", ldown);
  row("Slurm: squeue shows the job ended (NODE_FAIL; polled)", jf);
  row("orchestrate: attempt on alpha exited (detection)", det);
  row("orchestrate: replacement attempt on beta (placed)", placed);
  row("orchestrate: job running on beta (recovery, end to end)", rec);
  std::printf("shares\n");
  row("  detection after Slurm's DOWN (orchestrate's part)", det_share);
  row("  recovery after detection (orchestrate + beta's Slurm)", rec_share);
  if (!rec.empty()) {
    const double p95 = percentile(rec, 95);
    std::printf("end to end p95 (nearest rank over %zu runs): %.2f s; goal <= 30 s: %s\n",
                rec.size(), p95, p95 <= 30 ? "met" : "NOT met");
  }
  std::printf(
      "intervals: Slurm SlurmdTimeout %s, MessageTimeout %s, SchedulerParameters %s; site worker "
      "poll %d ms; inventory every 60 polls of a busy site and after an attempt ends; brain tick "
      "250 ms; job restart backoff %.1f s; REST polled every 50 ms, Slurm every ~%.0f ms "
      "(achieved)\n",
      intervals.slurmd_timeout.c_str(), intervals.message_timeout.c_str(),
      intervals.scheduler_parameters.c_str(), o.poll_ms, o.backoff_s, median(period));
  std::fflush(stdout);
}

// ---- 2. launches/s and 3. polls/s -----------------------------------------------------------

struct Series {
  std::vector<double> ms;  // per successful call
  int failures = 0;
  std::string first_error;
  void fail(const std::string& why) {
    if (failures++ == 0) first_error = first_line(why);
  }
  double per_second() const {
    return ms.empty() ? 0 : 1000.0 * static_cast<double>(ms.size()) / sum(ms);
  }
};

template <typename Body>
void timed(Series& s, Body body) {
  auto t = Clock::now();
  std::string error;
  bool ok = body(error);
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  if (ok) {
    s.ms.push_back(ms);
  } else {
    s.fail(error);
  }
}

void print_series_table(const char* unit, const std::vector<std::pair<std::string, Series*>>& rows,
                        const Series& baseline) {
  std::printf("%-62s %9s %8s %8s %9s\n", "", unit, "med ms", "max ms", "vs base");
  for (const auto& [name, s] : rows) {
    std::printf("%-62s %9.1f %8.1f %8.1f %8.2fx", name.c_str(), s->per_second(), median(s->ms),
                max_of(s->ms),
                baseline.per_second() > 0 ? s->per_second() / baseline.per_second() : 0);
    if (s->failures) std::printf("  (%d failed: %s)", s->failures, s->first_error.c_str());
    std::printf("\n");
  }
  std::fflush(stdout);
}

LaunchRequest tiny_request(const std::string& token, int i, const std::string& command) {
  LaunchRequest req;
  req.token = token;
  req.job_id = i;
  req.attempt_no = 1;
  req.job_name = "bench";
  req.command = command;
  req.nodes = 1;
  req.gpus_per_node = 1;
  return req;
}

// The Slurm job id in sbatch --parsable's "ID" or "ID;CLUSTER".
std::string parsable_id(const std::string& out) {
  std::string line = first_line(out);
  return line.substr(0, line.find(';'));
}

void scancel_all(const test::SlurmLab& lab, const std::vector<std::string>& ids) {
  for (std::size_t i = 0; i < ids.size(); i += 50) {
    std::vector<std::string> argv = {"scancel"};
    for (std::size_t k = i; k < std::min(ids.size(), i + 50); ++k) argv.push_back(ids[k]);
    if (auto r = lab.slurm("alpha", argv); !r) {
      std::cerr << "  scancel: " << first_line(r.error().message) << "\n";
    }
  }
}

void bench_throughput(int launches, int polls) {
  const auto budget = milliseconds(180000);  // per measurement, whatever N is
  auto lab = start_lab({"alpha"});
  const ClusterSpec spec = (*lab)->cluster_spec("alpha");
  SlurmSite site(spec, std::make_unique<SshSession>(spec.name, spec.ssh));
  // One connection, opened before timing: a server keeps it for as long as it runs.
  auto t_connect = Clock::now();
  auto warm = site.ssh().exec("true");
  if (!warm) throw std::runtime_error("ssh to alpha: " + warm.error().message);
  const double connect_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - t_connect).count();
  const std::string tag = std::to_string(getpid());

  if (launches > 0 && !stopping()) {
    std::printf("\n== 2. launches per second through sbatch (N=%d each, interleaved) ==\n",
                launches);
    Series naive, session;
    std::vector<std::string> ids;
    const auto end = Clock::now() + budget;
    for (int i = 0; i < launches && !stopping() && Clock::now() < end; ++i) {
      // The naive way: one new ssh process doing what launch does, in one remote command.
      timed(naive, [&](std::string& error) {
        auto plan = slurm::make_batch_plan(
            tiny_request("bench-naive-" + tag + "-" + std::to_string(i), i, "true"), spec);
        if (!plan) {
          error = plan.error().message;
          return false;
        }
        const std::string script = shell_quote(plan->paths.script).value();
        std::string command = plan->prepare_command;
        command += " && cat > " + script;
        command += " && chmod 0755 " + script;
        command += " && " + plan->submit_command;
        test::LabCommand c = (*lab)->ssh("alpha", command, plan->script);
        if (c.exit_code != 0) {
          error = c.err.empty() ? c.out : c.err;
          return false;
        }
        ids.push_back(parsable_id(c.out));
        return true;
      });
      timed(session, [&](std::string& error) {
        auto r =
            site.launch(tiny_request("bench-site-" + tag + "-" + std::to_string(i), i, "true"));
        if (!r) {
          error = r.error().message;
          return false;
        }
        ids.push_back(r->site_job_id);
        return true;
      });
    }
    print_series_table("launch/s",
                       {{"baseline: new `ssh` process per launch (mkdir; cat >; sbatch)", &naive},
                        {"SlurmSite::launch, one SSH connection (mkdir; SFTP; sbatch)", &session}},
                       naive);
    scancel_all(**lab, ids);
    std::printf("(connection set up once before timing: %.0f ms; %zu Slurm jobs cancelled after)\n",
                connect_ms, ids.size());
  }

  if (polls > 0 && !stopping()) {
    std::printf("\n== 3. squeue polls per second on one running job (N=%d each, interleaved) ==\n",
                polls);
    const std::string token = "bench-observe-" + tag;
    auto launched = site.launch(tiny_request(token, 0, "sleep 600"));
    if (!launched)
      throw std::runtime_error("launching the job to poll: " + launched.error().message);
    const bool running = wait_for(
        [&] {
          auto o = site.observe(token, 0);
          return o && o->phase == RunPhase::running;
        },
        milliseconds(60000), milliseconds(200));
    if (!running) {
      scancel_all(**lab, {launched->site_job_id});
      throw std::runtime_error("the job to poll did not start within 60 s");
    }
    const std::string squeue = shell_command(slurm::squeue_by_name_argv(token)).value();
    Series naive, channel, exec, observe;
    const auto end = Clock::now() + budget;
    for (int i = 0; i < polls && !stopping() && Clock::now() < end; ++i) {
      timed(naive, [&](std::string& error) {
        test::LabCommand c = (*lab)->ssh("alpha", squeue);
        if (c.exit_code != 0 || c.out.empty()) {
          error = c.err + c.out;
          return false;
        }
        return true;
      });
      timed(channel, [&](std::string& error) {
        auto r = site.ssh().exec("true");
        if (!r || r->exit_status != 0) {
          error = r ? r->err : r.error().message;
          return false;
        }
        return true;
      });
      timed(exec, [&](std::string& error) {
        auto r = site.ssh().exec(squeue);
        if (!r || r->exit_status != 0 || r->out.empty()) {
          error = r ? r->err + r->out : r.error().message;
          return false;
        }
        return true;
      });
      timed(observe, [&](std::string& error) {
        auto r = site.observe(token, 0);
        if (!r || r->phase != RunPhase::running) {
          error = r ? "not running" : r.error().message;
          return false;
        }
        return true;
      });
    }
    print_series_table("polls/s",
                       {{"baseline: new `ssh` process per `squeue --name`", &naive},
                        {"SshSession::exec(\"true\"): one channel, no Slurm (floor)", &channel},
                        {"SshSession::exec(squeue), one connection", &exec},
                        {"SlurmSite::observe (squeue + SFTP read of output.log)", &observe}},
                       naive);
    scancel_all(**lab, {launched->site_job_id});
    std::printf("(squeue command: %s)\n", squeue.c_str());
  }
  std::fflush(stdout);
}

int usage() {
  std::fprintf(stderr,
               "usage: bench_slurm [--runs N] [--launches N] [--polls N] [--poll-interval-ms MS]\n"
               "                   [--backoff-s S] [--slurmd-timeout S]\n"
               "  N = 0 skips that measurement; defaults 5, 40, 100, 200 ms, 0.1 s, the lab's\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) return usage();
    char* end = nullptr;
    const double v = std::strtod(argv[++i], &end);
    if (*end != '\0' || !(v >= 0 && v <= 100000)) return usage();
    const bool whole = v == std::floor(v);
    if (flag == "--runs" && whole) {
      o.runs = static_cast<int>(v);
    } else if (flag == "--launches" && whole) {
      o.launches = static_cast<int>(v);
    } else if (flag == "--polls" && whole) {
      o.polls = static_cast<int>(v);
    } else if (flag == "--poll-interval-ms" && whole && v >= 10) {
      o.poll_ms = static_cast<int>(v);
    } else if (flag == "--backoff-s" && v >= 0.1) {
      o.backoff_s = v;
    } else if (flag == "--slurmd-timeout" && whole && v >= 1) {
      o.slurmd_timeout = static_cast<int>(v);
    } else {
      return usage();
    }
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::printf("bench_slurm on the real Slurm lab (tests/lab/slurm); %ld CPUs, load %.2f at start\n",
              sysconf(_SC_NPROCESSORS_ONLN), load_average());
  std::fflush(stdout);
  int rc = 0;
  try {
    if (o.launches > 0 || o.polls > 0) bench_throughput(o.launches, o.polls);
    if (o.runs > 0) bench_failover(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_slurm: %s\n", e.what());
    rc = 1;
  }
  std::printf("\nload %.2f at the end%s\n", load_average(), stopping() ? " (interrupted)" : "");
  return stopping() ? 130 : rc;
}
