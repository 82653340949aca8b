#include "bench/slurm_failover.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_util.h"
#include "bench/slurm_lab_util.h"
#include "testkit/server_process.h"
#include "testkit/slurm_lab.h"

namespace orch::bench {

namespace {

using nlohmann::json;
using std::chrono::milliseconds;

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
  std::optional<double> first_step;  // the replacement's first progress line (its agent's clock)
  bool on_spare = false;             // the replacement got the spare's node
  std::string cause;
};

// poll_ms 0: the cluster's default poll interval.
std::string cluster_yaml(const test::LabCluster& c, int poll_ms, int spares) {
  return "  - name: " + c.name +
         (spares > 0 ? "\n    spares: " + std::to_string(spares) : std::string()) +
         "\n    provider: slurm\n    nodes: " + std::to_string(c.nodes.size()) +
         "\n    gpus_per_node: 8\n    accelerator: cpu-slot\n    peak_tflops: 0.001\n" +
         (poll_ms > 0 ? "    unreachable_grace_s: 20\n    poll_interval_ms: " +
                            std::to_string(poll_ms) + "\n"
                      : std::string()) +
         "    storage: {root: " + c.storage_root + ", checkpoints: " + c.storage_root +
         "/ckpt}\n    ssh: {host: " + c.host + ", port: " + std::to_string(c.ssh_port) +
         ", user: " + c.user + ", key_file: " + c.key_file + ", known_hosts: " + c.known_hosts +
         ", connect_timeout_s: 2, command_timeout_s: 20}\n";
}

bool gang(const FailoverOptions& o) {
  return o.gang_nodes > 1;
}

// Where the replacement is expected: beta for a one-node job, alpha (less the dead node) for a
// gang.
std::string target_cluster(const FailoverOptions& o) {
  return gang(o) ? "alpha" : "beta";
}

// The toy trainer, a checkpoint every 10 steps (kept: the replacement resumes from one),
// long enough to outlive the measurement; restarts after 0.1 s. A gang's ranks all-reduce
// every step and its placement is alpha alone.
std::string job_yaml(const FailoverOptions& o) {
  const std::string gang_flags =
      gang(o) ? " --collective-timeout-s 60 --rendezvous-timeout-s 60" : "";
  return "name: failover\ncommand: " ORCH_BIN_DIR
         "/toy_trainer --dim 32 --batch 16 --steps 100000 --step-delay-ms 40 --ckpt-every 10"
         " --keep-ckpts 0" +
         gang_flags +
         " --ckpt-dir \"$ORCH_CHECKPOINT_DIR\"\n"
         "resources: {nodes: " +
         std::to_string(o.gang_nodes) +
         ", gpus_per_node: 2}\n"
         "model: {parameters: 1024}\n"
         "checkpoint: {interval_steps: 10}\n" +
         (o.defaults ? std::string()
                     : "health: {heartbeat_timeout_s: " + std::to_string(o.heartbeat_timeout_s) +
                           "}\n"
                           "restart: {max_infra_restarts: 3, max_user_restarts: 0, backoff: "
                           "{initial_s: " +
                           std::to_string(o.backoff_s) +
                           ", max_s: " + std::to_string(std::max(1.0, o.backoff_s)) + "}}\n") +
         (gang(o) ? "placement: {allowed: [alpha]}\n" : "placement: {preferred: [alpha]}\n");
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

struct Intervals {
  std::string slurmd_timeout, message_timeout, scheduler_parameters;
};

FailoverRun failover_once(const FailoverOptions& o, Intervals& intervals) {
  FailoverRun run;
  const std::vector<std::string> clusters =
      gang(o) ? std::vector<std::string>{"alpha"} : std::vector<std::string>{"alpha", "beta"};
  auto lab = start_lab(clusters, gang(o) ? o.gang_nodes + 1 : 1);
  const std::string target = target_cluster(o);
  if (intervals.slurmd_timeout.empty()) {
    intervals.slurmd_timeout = slurm_config(**lab, "alpha", "SlurmdTimeout");
    intervals.message_timeout = slurm_config(**lab, "alpha", "MessageTimeout");
    intervals.scheduler_parameters = slurm_config(**lab, "alpha", "SchedulerParameters");
  }
  e2e::TempDir dir;
  const std::string config = dir.path() + "/clusters.yaml";
  const std::string log = dir.path() + "/server.log";
  std::string clusters_file = "clusters:\n";
  for (const auto& name : clusters) {
    clusters_file += cluster_yaml((*lab)->cluster(name), o.defaults ? 0 : o.poll_ms,
                                  name == "alpha" && gang(o) ? o.spares : 0);
  }
  e2e::write_file(config, clusters_file);
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

  std::vector<std::string> spare_nodes;
  if (gang(o) && o.spares > 0) {
    const bool held = wait_for(
        [&] {
          json list = e2e::get_json(url, "/api/v1/clusters");
          if (!list.is_object()) return false;
          for (const auto& c : list["clusters"]) {
            if (c.value("name", "") != "alpha" || c["spares"].value("ready", 0) < o.spares)
              continue;
            spare_nodes.clear();
            for (const auto& n : c["spares"]["nodes"]) spare_nodes.push_back(n.value("node", ""));
            return true;
          }
          return false;
        },
        milliseconds(120000));
    if (!held) return fail(stopping() ? "interrupted" : "alpha's spares were not ready in time");
  }
  HttpResponse r = e2e::call(url, "POST", "/api/v1/jobs", job_yaml(o), "application/yaml");
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
  // A gang loses its last node (not the rendezvous host); a one-node job its only one.
  const json& attempt_nodes = before["attempts"][0]["nodes"];
  if (gang(o) && (!attempt_nodes.is_array() ||
                  attempt_nodes.size() != static_cast<std::size_t>(o.gang_nodes))) {
    return fail("the gang's attempt does not list its " + std::to_string(o.gang_nodes) +
                " nodes: " + before.dump());
  }
  const std::string node = gang(o) ? attempt_nodes.back().get<std::string>() : alpha.nodes.at(0);

  run.job_processes = job_processes_on(alpha.slurm_conf, node).size();
  // The crash. Time runs from just before the kill (conservative: the kill itself counts).
  const auto wall0 = std::chrono::system_clock::now();
  const auto t0 = SteadyClock::now();
  if (auto k = (*lab)->kill_node("alpha", node); !k) return fail("kill_node: " + k.error().message);
  run.kill_s = seconds_since(t0);
  // On a real machine the job's processes die with it; kill-node kills the stepd's descendants,
  // this catches anything that escaped them (there should be nothing).
  run.survivors = kill_all(job_processes_on(alpha.slurm_conf, node));

  // Long enough to see Slurm's own DOWN too: SlurmdTimeout plus a ping round (a third of it).
  const auto deadline =
      t0 + milliseconds(std::max(120'000, static_cast<int>(o.slurmd_timeout * 1'400) + 30'000));
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
    while (!stopping() && !quit && SteadyClock::now() < deadline && !(node_down && job_final)) {
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
  while (!stopping() && SteadyClock::now() < deadline) {
    json a = e2e::get_json(url, job_path + "/attempts");
    if (a.is_object()) {
      for (const auto& att : a["attempts"]) {
        if (att.value("token", "") == token && att.value("state", "") == "exited" &&
            !run.detected) {
          at(run.detected);
          run.cause = att.value("cause", "");
        }
        // The replacement: another attempt on the target cluster.
        if (att.value("token", "") != token && att.value("cluster", "") == target) {
          at(run.placed);
          if (att.value("state", "") == "running") at(run.recovered);
          const json& first = att["first_progress_ms"];
          if (first.is_number_integer() && !run.first_step) {
            const auto ms = std::chrono::duration_cast<milliseconds>(wall0.time_since_epoch());
            run.first_step = static_cast<double>(first.get<long long>() - ms.count()) / 1000.0;
            for (const auto& n : att["nodes"]) {
              for (const auto& s : spare_nodes) run.on_spare |= n == s;
            }
          }
        }
      }
    }
    if (run.recovered && (o.spares == 0 || run.first_step)) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  if (!o.wait_for_slurm_down) quit = true;
  slurm_poller.join();
  const std::string ctld_log = (*lab)->dir() + "/alpha/log/slurmctld.log";
  run.logged_down = logged_after(ctld_log, node, "setting DOWN", wall0);
  if (!run.recovered) {
    return fail(stopping() ? "interrupted"
                           : "no replacement running on " + target + " before the deadline");
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

}  // namespace

void bench_failover(const FailoverOptions& o) {
  const std::string target = target_cluster(o);
  if (gang(o)) {
    std::printf(
        "\n== 1. node crash under a running %d-node gang: detection and replacement (%d runs) ==\n",
        o.gang_nodes, o.runs);
  } else {
    std::printf("\n== 1. node crash under a running job: detection and recovery (%d runs) ==\n",
                o.runs);
  }
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
        "%s, DOWN %s, job %s %s | slurmctld.log: setting DOWN %s | orchestrate: exited(%s) %s, "
        "placed on %s %s, running on %s %s (s)\n",
        i, r.ok ? "ok  " : "FAIL", r.kill_s, r.job_processes, r.survivors,
        opt(r.not_responding).c_str(), opt(r.down).c_str(),
        r.job_final_state.empty() ? "?" : r.job_final_state.c_str(), opt(r.job_final).c_str(),
        opt(r.logged_down).c_str(), r.cause.c_str(), opt(r.detected).c_str(), target.c_str(),
        opt(r.placed).c_str(), target.c_str(), opt(r.recovered).c_str());
    std::printf("        scontrol State=: %s\n", r.node_states.c_str());
    if (o.spares > 0) {
      std::printf("        replacement's first step %s s, on the hot spare: %s\n",
                  opt(r.first_step).c_str(), r.on_spare ? "yes" : "no");
    }
    if (!r.ok) std::printf("        failed: %s\n", first_line(r.failure).c_str());
    std::fflush(stdout);
    done.push_back(r);
  }
  std::vector<double> nr, ldown, down, jf, det, placed, rec, det_share, rec_share, period, first;
  int on_spare = 0;
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
    if (r.first_step) first.push_back(*r.first_step);
    on_spare += r.on_spare ? 1 : 0;
  }
  std::printf("\n%-62s %8s %8s %8s %5s\n", "seconds from the kill until", "p50", "p95", "max",
              "runs");
  auto row = [](const std::string& name, const std::vector<double>& v) {
    if (v.empty()) {
      std::printf("%-62s %8s %8s %8s %5d\n", name.c_str(), "-", "-", "-", 0);
    } else {
      std::printf("%-62s %8.2f %8.2f %8.2f %5zu\n", name.c_str(), median(v), percentile(v, 95),
                  max_of(v), v.size());
    }
  };
  row("Slurm: scontrol shows the node NOT_RESPONDING (polled)", nr);
  row("Slurm: scontrol shows the node DOWN (polled)", down);
  row("Slurm: node set DOWN (slurmctld.log, ms; baseline)", ldown);
  row(gang(o) ? "Slurm: squeue shows the job ended (polled)"
              : "Slurm: squeue shows the job ended (NODE_FAIL; polled)",
      jf);
  row("orchestrate: attempt on alpha exited (detection)", det);
  row("orchestrate: replacement attempt on " + target + " (placed)", placed);
  row("orchestrate: replacement running on " + target + " (end to end)", rec);
  if (o.spares > 0) row("the replacement's first step (on survivors and a hot spare)", first);
  std::printf("shares\n");
  row("  detection minus Slurm's DOWN (negative: before Slurm)", det_share);
  row("  recovery after detection (orchestrate + " + target + "'s Slurm)", rec_share);
  if (gang(o) && !det.empty()) {
    const double p95 = percentile(det, 95);
    std::printf("detection p95 (nearest rank over %zu runs): %.2f s; goal <= 15 s: %s\n",
                det.size(), p95, p95 <= 15 ? "met" : "NOT met");
  }
  if (!rec.empty()) {
    const double p95 = percentile(rec, 95);
    std::printf("end to end p95 (nearest rank over %zu runs): %.2f s; goal <= 30 s: %s\n",
                rec.size(), p95, p95 <= 30 ? "met" : "NOT met");
  }
  if (o.spares > 0 && !first.empty()) {
    const double p95 = percentile(first, 95);
    std::printf(
        "first step p95 (nearest rank over %zu runs): %.2f s; goal <= 20 s: %s; "
        "replacements on the spare: %d of %zu\n",
        first.size(), p95, p95 <= 20 ? "met" : "NOT met", on_spare, done.size());
  }
  std::printf("intervals: Slurm SlurmdTimeout %s, MessageTimeout %s, SchedulerParameters %s; ",
              intervals.slurmd_timeout.c_str(), intervals.message_timeout.c_str(),
              intervals.scheduler_parameters.c_str());
  if (o.defaults) {
    std::printf("orchestrate's defaults (site worker poll, heartbeat timeout, restart policy)");
  } else {
    std::printf("site worker poll %d ms; job restart backoff %.1f s", o.poll_ms, o.backoff_s);
    if (gang(o)) std::printf("; heartbeat_timeout_s %.1f", o.heartbeat_timeout_s);
  }
  std::printf("; brain tick 250 ms; REST polled every 50 ms, Slurm every ~%.0f ms (achieved)",
              median(period));
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace orch::bench
