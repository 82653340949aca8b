// Issue 12's REST figures: the real `orchestrate serve` on loopback, driven by keep-alive
// clients (bench/http_load.h), with a small and a large history in its database, and with an
// empty and a long queue of jobs waiting for capacity. Each table compares the large case with
// the small one measured in the same run: reads and submissions must cost what they return,
// not what the database holds.
//
//   build/bin/bench_rest [--jobs N] [--seconds S]
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/bench_util.h"
#include "bench/http_load.h"
#include "scheduler/store/store.h"
#include "testkit/job_user.h"
#include "testkit/server_process.h"

using namespace orch;  // NOLINT: a benchmark's main file
using bench::LoadRequest;
using bench::LoadResult;

namespace {

// As root, the local sites name the user jobs run as (testkit/job_user.h).
std::string clusters_yaml() {
  const std::string run_as = testkit::local_run_as_yaml();
  return "server: {bind: 127.0.0.1, port: 0}\nclusters:\n"
         "  - {name: alpha, provider: local, nodes: 2, gpus_per_node: 8, accelerator: h100" +
         run_as +
         "}\n"
         "  - {name: beta, provider: local, nodes: 2, gpus_per_node: 8, accelerator: h100" +
         run_as + "}\n";
}

// History as a busy month leaves it: finished jobs of 3 attempts, each with progress samples,
// checkpoints and events.
void fill_history(const std::string& db_path, int jobs) {
  auto store = std::move(Store::open(db_path).value());
  const Millis t0 = 1'700'000'000'000;
  auto r = store->transaction([&]() -> Result<void> {
    for (int j = 0; j < jobs; ++j) {
      JobRow job;
      job.name = "history-" + std::to_string(j);
      job.spec.name = job.name;
      job.spec.command = "train --config c.yaml";
      job.spec.gpus_per_node = 8;
      job.state = JobState::succeeded;
      job.created_ms = job.updated_ms = t0 + static_cast<std::int64_t>(j) * 1000;
      auto id = store->insert_job(job);
      if (!id) return id.error();
      for (int n = 1; n <= 3; ++n) {
        AttemptRow a;
        a.job_id = *id;
        a.no = n;
        a.cluster = n % 2 ? "alpha" : "beta";
        a.token = "orch-" + std::to_string(*id) + "-" + std::to_string(n) + "-h";
        a.state = AttemptState::exited;
        a.cause = n == 3 ? ExitCause::succeeded : ExitCause::node_lost;
        a.gpus = 8;
        a.started_ms = job.created_ms + static_cast<std::int64_t>(n) * 100;
        auto aid = store->insert_attempt(a);
        if (!aid) return aid.error();
        a.id = *aid;
        a.site_done = true;
        a.ended_ms = a.started_ms + 90;
        a.first_step = (n - 1) * 100 + 1;
        a.last_step = n * 100;
        if (auto u = store->update_attempt(a); !u) return u;
        for (int s = 1; s <= 20; ++s) {
          const std::int64_t step = (n - 1) * 100 + s * 5;
          if (auto p = store->add_series_step(*aid, *a.first_step,
                                              {step, 2.5, 4096, 0.5, 0.4, a.started_ms + s});
              !p) {
            return p;
          }
        }
        if (auto c = store->insert_checkpoint(
                {0, *id, a.id, static_cast<std::int64_t>(n) * 100,
                 "/ckpt/" + std::to_string(*id) + "/" + std::to_string(n), 2.0, a.started_ms + 50});
            !c) {
          return c.error();
        }
        for (int e = 0; e < 3; ++e) {
          if (auto ev = store->add_event(*id, n, a.started_ms + e, "progress", "an event"); !ev) {
            return ev;
          }
        }
      }
    }
    return Ok{};
  });
  if (!r) {
    std::fprintf(stderr, "bench_rest: cannot fill the history: %s\n", r.error().message.c_str());
    std::exit(1);
  }
}

struct Server {
  std::unique_ptr<e2e::TempDir> dir = std::make_unique<e2e::TempDir>();
  std::unique_ptr<e2e::ServerProcess> process;
  int port = 0;

  std::string state() const { return dir->path() + "/state"; }
  void start() {
    e2e::write_file(dir->path() + "/clusters.yaml", clusters_yaml());
    std::string error;
    process = e2e::ServerProcess::start(dir->path() + "/clusters.yaml", state(),
                                        dir->path() + "/server.log", error);
    if (!process) {
      std::fprintf(stderr, "bench_rest: the server did not start: %s\n", error.c_str());
      std::exit(1);
    }
    port = std::atoi(process->url().substr(process->url().rfind(':') + 1).c_str());
    bench::set_bearer_token(process->admin_token());
  }
  // CPU seconds the server has used (utime + stime from /proc).
  double cpu_seconds() const {
    std::ifstream in("/proc/" + std::to_string(process->pid()) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string skip;
    for (int i = 3; i < 14; ++i) fields >> skip;
    double utime = 0, stime = 0;
    fields >> utime >> stime;
    return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
};

struct Row {
  std::string what;
  int jobs = 0;
  LoadResult result;
};

void print_rows(const std::vector<Row>& rows) {
  std::printf("%-40s %7s %9s %8s %8s %7s %9s\n", "requests", "jobs", "req/s", "p50 ms", "p99 ms",
              "errors", "vs small");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const LoadResult& l = r.result;
    // Rows come in pairs: the small database, then the large one.
    std::string ratio = "-";
    if (i % 2 == 1 && rows[i - 1].result.per_second() > 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2fx", l.per_second() / rows[i - 1].result.per_second());
      ratio = buf;
    }
    std::printf("%-40s %7d %9.0f %8.2f %8.2f %7d %9s\n", r.what.c_str(), r.jobs, l.per_second(),
                bench::percentile(l.latency_ms, 50), bench::percentile(l.latency_ms, 99), l.errors,
                ratio.c_str());
  }
  for (const Row& r : rows) {
    if (!r.result.first_error.empty()) {
      std::printf("  first error of \"%s\" (%d jobs): %s\n", r.what.c_str(), r.jobs,
                  bench::first_line(r.result.first_error).c_str());
    }
  }
}

// Reads against a database of `jobs` finished jobs.
std::vector<LoadResult> measure_reads(int jobs, double seconds) {
  Server server;
  std::filesystem::create_directories(server.state());
  fill_history(server.state() + "/orchestrate.db", jobs);
  server.start();
  std::vector<LoadResult> out;
  auto one_job = [jobs](int client, int i) {
    std::mt19937 rng(static_cast<unsigned>(client * 7919 + i));
    const int id = 1 + static_cast<int>(rng() % static_cast<unsigned>(jobs));
    return LoadRequest{"GET", "/api/v1/jobs/" + std::to_string(id)};
  };
  auto page = [](int, int) { return LoadRequest{"GET", "/api/v1/jobs?limit=100"}; };
  auto small_page = [](int, int) { return LoadRequest{"GET", "/api/v1/jobs?limit=10"}; };
  // The first read of every job, in order, one client: what a read costs before the server
  // has rendered that job (it keeps what does not change with time, keyed by the job's
  // revision). The rows after it read jobs it has seen, as a status page polling them does.
  out.push_back(bench::run_load(server.port, 1, 600, jobs, [](int, int i) {
    return LoadRequest{"GET", "/api/v1/jobs/" + std::to_string(i + 1)};
  }));
  out.push_back(bench::run_load(server.port, 1, seconds, 1 << 30, one_job));
  out.push_back(bench::run_load(server.port, 64, seconds, 1 << 30, one_job));
  out.push_back(bench::run_load(server.port, 64, seconds, 1 << 30, small_page));
  out.push_back(bench::run_load(server.port, 64, seconds, 1 << 30, page));
  out.push_back(bench::run_load(server.port, 256, seconds, 1 << 30, one_job));
  server.process->stop();
  return out;
}

std::string job_body(const std::string& name, int nodes, const std::string& command) {
  return nlohmann::json{
      {"name", name}, {"command", command}, {"resources", {{"nodes", nodes}, {"gpus_per_node", 8}}}}
      .dump();
}

struct QueueFigures {
  LoadResult fill;         // submissions that built the queue
  LoadResult submissions;  // the measured ones
  LoadResult healthz;      // one client beside them
  double idle_core_share = 0;
};

// Submissions while `waiting` jobs wait for capacity that a running job on each cluster holds.
QueueFigures measure_queue(int waiting, double seconds) {
  Server server;
  server.start();
  for (const char* cluster : {"alpha", "beta"}) {
    nlohmann::json holder = nlohmann::json::parse(job_body("holder", 2, "sleep 600"));
    holder["placement"] = {{"allowed", {cluster}}};
    std::string body;
    const int status =
        bench::http_once(server.port, {"POST", "/api/v1/jobs", holder.dump()}, &body);
    if (status != 201) {
      std::fprintf(stderr, "bench_rest: holder job refused (%d): %s\n", status, body.c_str());
      std::exit(1);
    }
  }
  auto submit = [](int client, int i) {
    return LoadRequest{
        "POST", "/api/v1/jobs",
        job_body("w" + std::to_string(client) + "-" + std::to_string(i), 1, "train")};
  };
  QueueFigures f;
  if (waiting > 0) f.fill = bench::run_load(server.port, 16, 3600, waiting / 16, submit);
  LoadResult healthz;
  std::thread probe([&] {
    healthz = bench::run_load(server.port, 1, seconds, 1 << 30, [](int, int) {
      return LoadRequest{"GET", "/healthz"};
    });
  });
  f.submissions = bench::run_load(server.port, 16, seconds, 1 << 30, submit);
  probe.join();
  f.healthz = healthz;
  // Idle: nothing sent, the queue as it is.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double cpu0 = server.cpu_seconds();
  const auto t0 = bench::SteadyClock::now();
  std::this_thread::sleep_for(std::chrono::seconds(10));
  f.idle_core_share = (server.cpu_seconds() - cpu0) / bench::seconds_since(t0);
  for (int id : {1, 2}) {
    (void)bench::http_once(server.port,
                           {"POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel", ""});
  }
  // Let the cancels reach the holders' processes before the server goes.
  for (int i = 0; i < 100; ++i) {
    std::string body;
    bench::http_once(server.port, {"GET", "/api/v1/jobs/1/attempts"}, &body);
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (!j.is_discarded() && j.contains("attempts") && !j["attempts"].empty() &&
        j["attempts"].back().value("state", "") == "exited") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  server.process->stop();
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 10'000;
  double seconds = 5;
  if (auto rc = bench::parse_flags(
          argc, argv, "bench_rest",
          "REST reads and submissions of the real server, small against large history and queue.",
          {{"--jobs", "N", "jobs in the large database and the long queue (default 10000)", 16, 1e6,
            true, [&](double v) { jobs = static_cast<int>(v); }},
           {"--seconds", "S", "length of each measurement (default 5)", 0.5, 600, false,
            [&](double v) { seconds = v; }}})) {
    return *rc;
  }
  const int small = 10;
  std::printf("bench_rest: the real server on loopback; %d vs %d jobs; %.0f s per measurement\n\n",
              small, jobs, seconds);

  const auto reads_small = measure_reads(small, seconds);
  const auto reads_large = measure_reads(jobs, seconds);
  const char* names[] = {"GET /jobs/{id} first read, 1 client", "GET /jobs/{id}, 1 client",
                         "GET /jobs/{id}, 64 clients",          "GET /jobs?limit=10, 64 clients",
                         "GET /jobs?limit=100, 64 clients",     "GET /jobs/{id}, 256 clients"};
  std::vector<Row> rows;
  for (std::size_t i = 0; i < reads_small.size(); ++i) {
    rows.push_back({names[i], small, reads_small[i]});
    rows.push_back({names[i], jobs, reads_large[i]});
  }
  std::printf("reads, by jobs in the database (finished: 3 attempts, 60 samples, 9 events each)\n");
  print_rows(rows);

  const auto empty = measure_queue(0, seconds);
  const auto queued = measure_queue(jobs, seconds);
  std::printf(
      "\nsubmissions, by jobs waiting for capacity (16 clients; /healthz 1 client beside)\n");
  std::vector<Row> q = {{"POST /jobs", 0, empty.submissions},
                        {"POST /jobs", jobs, queued.submissions},
                        {"GET /healthz during the submissions", 0, empty.healthz},
                        {"GET /healthz during the submissions", jobs, queued.healthz}};
  print_rows(q);
  std::printf("  building the queue of %d: %.0f submissions/s, %d errors\n", jobs,
              queued.fill.per_second(), queued.fill.errors);
  std::printf(
      "\nidle server, CPU share of one core over 10 s: %.1f%% with 0 waiting, %.1f%% with "
      "%d waiting\n",
      empty.idle_core_share * 100, queued.idle_core_share * 100, jobs);
  return 0;
}
