// Issue 37's fair use: another token's reads while one `user` token floods submissions from 64
// clients, on the real `orchestrate serve` (loopback only), with the rate limiter at its
// defaults against the limiter effectively off (a rate of a million a second), each beside the
// same reads with no flood, measured in the same run. The goal: the reads' p99 under 50 ms
// during the flood with the limiter on.
//
//   build/bin/bench_fair_use [--seconds S] [--clients N] [--readers N]
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_util.h"
#include "bench/http_load.h"
#include "testkit/job_user.h"
#include "testkit/server_process.h"

using namespace orch;  // NOLINT: a benchmark's main file
using bench::LoadRequest;
using bench::LoadResult;

namespace {

// Two local clusters of 2 nodes x 8 GPUs; `limits` is the server.rate_limits map, or "".
std::string clusters_yaml(const std::string& limits) {
  const std::string run_as = testkit::local_run_as_yaml();
  std::string out = "server: {bind: 127.0.0.1, port: 0";
  if (!limits.empty()) out += ", rate_limits: " + limits;
  out += "}\nclusters:\n";
  for (const char* name : {"alpha", "beta"}) {
    out += std::string("  - {name: ") + name +
           ", provider: local, nodes: 2, gpus_per_node: 8, accelerator: h100" + run_as + "}\n";
  }
  return out;
}

class Server {
 public:
  explicit Server(const std::string& limits) {
    e2e::write_file(dir_.path() + "/clusters.yaml", clusters_yaml(limits));
    std::string error;
    process_ = e2e::ServerProcess::start(dir_.path() + "/clusters.yaml", dir_.path() + "/state",
                                         dir_.path() + "/server.log", error);
    if (!process_) {
      std::fprintf(stderr, "bench_fair_use: the server did not start: %s\n", error.c_str());
      std::exit(1);
    }
    port_ = std::atoi(process_->url().substr(process_->url().rfind(':') + 1).c_str());
  }
  ~Server() {
    cancel_running();
    process_->stop();
  }
  int port() const { return port_; }

  // A token of role user for name, made with the admin token.
  std::string token(const std::string& name) const {
    const nlohmann::json body = {{"name", name}, {"role", "user"}, {"teams", {"vision"}}};
    std::string answer;
    const int status = bench::http_once(
        port_, {"POST", "/api/v1/tokens", body.dump(), "application/json", admin()}, &answer);
    auto j = nlohmann::json::parse(answer, nullptr, false);
    if (status != 201 || !j.is_object() || !j.contains("token")) {
      std::fprintf(stderr, "bench_fair_use: cannot make a token (%d): %s\n", status,
                   answer.c_str());
      std::exit(1);
    }
    return j["token"].get<std::string>();
  }

 private:
  const std::string& admin() const { return process_->admin_token(); }
  // The flood's first jobs hold both clusters (`sleep`); cancel them before the server goes.
  void cancel_running() const {
    std::string answer;
    bench::http_once(port_, {"GET", "/api/v1/jobs?state=running", "", "", admin()}, &answer);
    auto j = nlohmann::json::parse(answer, nullptr, false);
    if (!j.is_object() || !j.contains("jobs")) return;
    for (const auto& job : j["jobs"]) {
      const std::string id = std::to_string(job.value("id", 0));
      bench::http_once(port_,
                       {"POST", "/api/v1/jobs/" + id + "/cancel", "", "application/json", admin()});
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));  // the cancels reach the processes
  }

  e2e::TempDir dir_;
  std::unique_ptr<e2e::ServerProcess> process_;
  int port_ = 0;
};

struct Figures {
  LoadResult quiet;  // the reads alone
  LoadResult reads;  // the reads during the flood
  LoadResult flood;  // the submissions (requests: 201s; errors: 429s and any other)
};

Figures measure(const std::string& limits, double seconds, int clients, int readers) {
  Server server(limits);
  const std::string alice = server.token("alice");
  const std::string bob = server.token("bob");
  auto read = [&bob](int, int) {
    return LoadRequest{"GET", "/api/v1/jobs?limit=20", "", "application/json", bob};
  };
  // Jobs as large as a cluster: the first two hold both, every later one waits.
  const std::string job =
      "name: flood\ncommand: sleep 600\nresources: {nodes: 2, gpus_per_node: 8}\n";
  auto submit = [&alice, &job](int, int) {
    return LoadRequest{"POST", "/api/v1/jobs", job, "application/yaml", alice};
  };
  Figures f;
  f.quiet = bench::run_load(server.port(), readers, seconds, 1 << 30, read);
  std::thread reading(
      [&] { f.reads = bench::run_load(server.port(), readers, seconds, 1 << 30, read); });
  f.flood = bench::run_load(server.port(), clients, seconds, 1 << 30, submit);
  reading.join();
  return f;
}

void print_row(const char* what, const char* limiter, const LoadResult& l) {
  std::printf("%-28s %-8s %9.0f %8.2f %8.2f %8.2f %7d\n", what, limiter, l.per_second(),
              bench::percentile(l.latency_ms, 50), bench::percentile(l.latency_ms, 99),
              bench::percentile(l.latency_ms, 100), l.errors);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  int clients = 64;
  int readers = 4;
  if (auto rc = bench::parse_flags(
          argc, argv, "bench_fair_use",
          "Another token's reads while one token floods submissions, limiter on and off.",
          {{"--seconds", "S", "length of each measurement (default 5)", 0.5, 600, false,
            [&](double v) { seconds = v; }},
           {"--clients", "N", "clients of the flooding token (default 64)", 1, 1024, true,
            [&](double v) { clients = static_cast<int>(v); }},
           {"--readers", "N", "clients of the reading token (default 4)", 1, 256, true,
            [&](double v) { readers = static_cast<int>(v); }}})) {
    return *rc;
  }
  std::printf(
      "bench_fair_use: the real server on loopback; %d clients of one user token submit, %d of "
      "another read GET /jobs?limit=20; %.0f s each; load average %.2f\n\n",
      clients, readers, seconds, bench::load_average());
  const Figures on = measure("", seconds, clients, readers);
  const Figures off =
      measure("{user: {per_s: 1000000, burst: 1000000}}", seconds, clients, readers);
  std::printf("%-28s %-8s %9s %8s %8s %8s %7s\n", "requests", "limiter", "ok/s", "p50 ms", "p99 ms",
              "max ms", "refused");
  print_row("reads, no flood", "on", on.quiet);
  print_row("reads, during the flood", "on", on.reads);
  print_row("submissions (the flood)", "on", on.flood);
  print_row("reads, no flood", "off", off.quiet);
  print_row("reads, during the flood", "off", off.reads);
  print_row("submissions (the flood)", "off", off.flood);
  for (const auto* f : {&on, &off}) {
    const char* which = f == &on ? "on" : "off";
    if (!f->flood.first_error.empty()) {
      std::printf("  first refusal of the flood, limiter %s: %s\n", which,
                  bench::first_line(f->flood.first_error).c_str());
    }
    if (!f->reads.first_error.empty()) {
      std::printf("  first failed read, limiter %s: %s\n", which,
                  bench::first_line(f->reads.first_error).c_str());
    }
  }
  const double p99 = bench::percentile(on.reads.latency_ms, 99);
  std::printf("\nreads' p99 during the flood, limiter on: %.2f ms (goal: under 50 ms) %s\n", p99,
              p99 < 50 ? "met" : "NOT met");
  return 0;
}
