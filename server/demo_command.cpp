// `orchestrate demo`: the five-minute tour in one command. It starts an embedded server on a
// temporary state directory with two local sites, submits the toy trainer, takes the first
// site down part-way, and shows the job resume on the second site from its latest checkpoint.
// It talks to the server over the REST API, exactly as the CLI does, and checks the outcome:
// a demo that did not resume correctly exits non-zero.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/client_commands.h"
#include "cli/client_token.h"
#include "cli/job_render.h"
#include "scheduler/spec/clusters_parser.h"
#include "server/required_programs.h"
#include "server/server.h"
#include "server/server_commands.h"
#include "web/http/http_client.h"

namespace orch {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// As root, the demo's sites run their jobs as this user (`make deps` creates it): a root server
// runs local jobs only as an unprivileged user (docs/security.md, "The host").
constexpr const char* kJobUser = "orchestrate-job";

// The demo's two local sites, as a user would write them. A short grace so the outage is
// noticed fast.
std::string demo_clusters_yaml(bool as_root) {
  const std::string run_as =
      as_root ? std::string(",\n     local: {run_as: ") + kJobUser + "}" : std::string();
  std::string out = "clusters:\n";
  for (const char* name : {"alpha", "beta"}) {
    out += std::string("  - {name: ") + name +
           ", provider: local, nodes: 2, gpus_per_node: 2, accelerator: cpu-slot,\n"
           "     unreachable_grace_s: 2, poll_interval_ms: 100" +
           run_as + "}\n";
  }
  return out;
}

// The embedded server on the demo's state directory, with its two sites.
Result<std::unique_ptr<Server>> start_demo_server(const std::string& state, bool as_root) {
  auto config = parse_clusters_file(demo_clusters_yaml(as_root), "demo-clusters.yaml");
  if (!config) return config.error();
  ServerSettings settings;
  settings.state_dir = state;
  settings.port = 0;
  settings.tick_ms = 100;
  return Server::start(*config, settings);
}

// Where the job finds toy_trainer: the build's bin directory, or as root a copy in `dir` (0755
// both), which the job's user can reach wherever the build lies (a checkout under /root, mode
// 0700, is closed to it).
Result<std::string> trainer_dir(const std::string& bin, const std::string& dir, bool as_root) {
  if (!as_root) return bin;
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::copy_file(bin + "/toy_trainer", dir + "/toy_trainer", fs::copy_options::overwrite_existing,
                ec);
  if (!ec) {
    fs::permissions(dir, fs::perms(0755), ec);
    if (!ec) fs::permissions(dir + "/toy_trainer", fs::perms(0755), ec);
  }
  if (ec) {
    return make_error(ErrorKind::io, "cannot stage toy_trainer in " + dir +
                                         " for the job's user: " + ec.message());
  }
  return dir;
}

class Demo {
 public:
  explicit Demo(DemoOptions o) : o_(o), start_(std::chrono::steady_clock::now()) {}
  int run();

 private:
  void say(const std::string& line) {
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::printf("[%5.1fs] %s\n", t, line.c_str());
    std::fflush(stdout);
  }
  Result<json> call(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& type = "application/json");
  void print_new_events();
  int summarize();
  int newest_replicated(std::optional<std::int64_t> until_ms);

  DemoOptions o_;
  std::chrono::steady_clock::time_point start_;
  std::string url_;
  std::string token_;  // the admin token the server made in the state directory
  std::int64_t job_ = 0;
  std::size_t events_shown_ = 0;
};

Result<json> Demo::call(const std::string& method, const std::string& target,
                        const std::string& body, const std::string& type) {
  auto r = http_request(url_, method, target, body, type, 10000, token_);
  if (!r) return r.error();
  json j = json::parse(r->body, nullptr, false);
  if (r->status >= 400) {
    std::string detail = j.is_object() ? j.value("detail", r->body) : r->body;
    return make_error(ErrorKind::internal, method + " " + target + ": " + detail);
  }
  if (j.is_discarded()) return make_error(ErrorKind::internal, "bad JSON from " + target);
  return j;
}

void Demo::print_new_events() {
  auto events = call("GET", "/api/v1/jobs/" + std::to_string(job_) + "/events");
  if (!events) return;
  const auto& list = (*events)["events"];
  for (; events_shown_ < list.size(); ++events_shown_) {
    const auto& e = list[events_shown_];
    if (e["kind"] == "checkpoint") continue;  // one every few steps: too chatty for a tour
    say("job " + std::to_string(job_) + ": " + e["message"].get<std::string>());
  }
}

int Demo::run() {
  char tmpl[] = "/tmp/orchestrate-demo-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::perror("mkdtemp");
    return kExitServerError;
  }
  // <tmp>/state is the server's; as root, <tmp>/bin holds the trainer for the job's user, who
  // may search <tmp> (not list it).
  const std::string base = tmpl;
  const std::string state = base + "/state";
  const bool as_root = geteuid() == 0;
  if (as_root) (void)chmod(tmpl, 0701);
  std::unique_ptr<Server> server;
  // However the demo ends: nothing of it keeps running, and its state goes unless --keep.
  struct Cleanup {
    Demo& demo;
    std::unique_ptr<Server>& server;
    const std::string& base;
    const std::string& state;
    ~Cleanup() {
      if (server) {
        // An outage kills a local site's processes: the quickest way to leave nothing behind.
        for (const char* site : {"alpha", "beta"}) {
          (void)demo.call("POST", std::string("/api/v1/clusters/") + site + "/outage",
                          R"({"down": true})");
        }
        server->stop();
      }
      if (demo.o_.keep) {
        std::printf("\nstate kept in %s (orchestrate.db, sites/*/runs/*/output.log)\n",
                    state.c_str());
      } else {
        std::error_code ec;
        fs::remove_all(base, ec);
      }
    }
  } cleanup{*this, server, base, state};
  std::printf("orchestrate demo: two local sites, one training job, one outage.\nstate: %s\n\n",
              state.c_str());

  auto bin = trainer_dir(executable_dir(), base + "/bin", as_root);
  if (!bin) {
    std::cerr << "error: " << bin.error().message << "\n";
    return kExitServerError;
  }
  auto started = start_demo_server(state, as_root);
  if (!started) {
    std::cerr << "error: " << started.error().message << "\n";
    return kExitServerError;
  }
  server = std::move(*started);
  url_ = server->url();
  token_ = read_token_file(state + "/admin.token");
  say("server up at " + url_ + " with sites alpha and beta (2 nodes x 2 slots each)");

  const int dim = 192;
  const std::string job_yaml =
      "name: toy-demo\n"
      "command: " +
      *bin + "/toy_trainer --steps " + std::to_string(o_.steps) + " --dim " + std::to_string(dim) +
      " --batch 96 --ckpt-every " + std::to_string(o_.checkpoint_every) +
      " --ckpt-dir \"$ORCH_CHECKPOINT_DIR\"\n"
      "resources: {nodes: 1, gpus_per_node: 2}\n"
      "checkpoint: {interval_steps: " +
      std::to_string(o_.checkpoint_every) +
      "}\n"
      "model: {parameters: " +
      std::to_string(dim * dim) +
      "}\n"
      "restart: {max_infra_restarts: 3, backoff: {initial_s: 1}}\n"
      // The toy trainer shares this machine's CPUs with the server and the other site: its
      // MFU swings more than a real job's, so only a large drop is worth an event here.
      "health: {mfu_drop_percent: 25}\n"
      "placement: {preferred: [alpha, beta]}\n";
  auto submitted = call("POST", "/api/v1/jobs", job_yaml, "application/yaml");
  if (!submitted) {
    std::cerr << "error: " << submitted.error().message << "\n";
    return kExitServerError;
  }
  job_ = (*submitted)["id"].get<std::int64_t>();

  bool outage = false;
  std::string final_state;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::chrono::steady_clock::now() < deadline) {
    print_new_events();
    auto job = call("GET", "/api/v1/jobs/" + std::to_string(job_));
    if (job) {
      const json& j = *job;
      std::string st = j["state"];
      if (st == "succeeded" || st == "failed" || st == "cancelled") {
        final_state = st;
        break;
      }
      if (!outage && j["cluster"] == "alpha" && j["step"].is_number() &&
          j["step"].get<int>() >= o_.outage_at_step && !j["last_checkpoint"].is_null() &&
          newest_replicated(std::nullopt) > 0) {
        say(">>> site alpha goes dark at step " + std::to_string(j["step"].get<int>()) +
            " (simulated outage: its processes die and it stops answering)");
        if (auto r = call("POST", "/api/v1/clusters/alpha/outage", R"({"down": true})"); !r) {
          std::cerr << "error: " << r.error().message << "\n";
          return kExitServerError;
        }
        outage = true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  print_new_events();
  if (final_state.empty()) {
    std::printf("\nthe job did not finish within 90 s\n");
    return kExitServerError;
  }
  return summarize();
}

// The newest step whose checkpoint was copied to beta and verified (at or before `until_ms`
// when given), from the job's events; 0 when none.
int Demo::newest_replicated(std::optional<std::int64_t> until_ms) {
  auto events = call("GET", "/api/v1/jobs/" + std::to_string(job_) + "/events");
  if (!events) return 0;
  int newest = 0;
  const std::string prefix = "checkpoint at step ";
  for (const auto& e : (*events)["events"]) {
    if (e["kind"] != "checkpoint-replicated") continue;
    if (until_ms && e["at_ms"].get<std::int64_t>() > *until_ms) continue;
    const std::string m = e["message"];
    if (m.rfind(prefix, 0) != 0 || m.find("copied to beta") == std::string::npos) continue;
    newest = std::max(newest, std::atoi(m.c_str() + prefix.size()));
  }
  return newest;
}

int Demo::summarize() {
  auto job = call("GET", "/api/v1/jobs/" + std::to_string(job_));
  auto attempts = call("GET", "/api/v1/jobs/" + std::to_string(job_) + "/attempts");
  if (!job || !attempts) return kExitServerError;
  const json& j = *job;
  const json& list = (*attempts)["attempts"];

  // The same table `orchestrate job show` prints.
  std::printf("\n");
  std::fflush(stdout);
  render_attempts(*attempts, std::cout);
  std::cout.flush();
  double ettr = j["ettr"].is_null() ? 0.0 : j["ettr"].get<double>();
  std::printf("\njob %lld %s; steps lost %lld (checkpoint every %d); ETTR %.0f%%\n",
              static_cast<long long>(job_), j["state"].get<std::string>().c_str(),
              static_cast<long long>(j["steps_lost"].get<std::int64_t>()), o_.checkpoint_every,
              ettr * 100);

  // The promise of the demo, checked: resumed on beta from the newest checkpoint alpha wrote.
  bool ok = j["state"] == "succeeded" && list.size() >= 2;
  if (ok) {
    const json& first = list[0];
    const json& second = list[1];
    // alpha's storage went dark with it: beta resumes from the newest checkpoint copied to
    // beta and verified there before attempt 2 was placed.
    const int at_beta = newest_replicated(second["started_ms"].get<std::int64_t>());
    const int last_alpha = first["last_step"].is_null() ? 0 : first["last_step"].get<int>();
    ok = first["cluster"] == "alpha" && first["cause"] == "site_down" &&
         second["cluster"] == "beta" && !second["resumed_from"].is_null() && at_beta > 0 &&
         second["resumed_from"]["step"].get<int>() == at_beta &&
         j["steps_lost"].get<int>() == last_alpha - at_beta;
  }
  std::printf("%s\n", ok ? "demo OK: the job lost its site and resumed on beta from its newest "
                           "checkpoint replicated there"
                         : "demo FAILED: the job did not resume as expected (see above)");
  return ok ? kExitOk : kExitServerError;
}

}  // namespace

int run_demo(const DemoOptions& options) {
  // Before anything starts: the demo's sites are local, and replicate with rsync.
  ClusterSpec local;
  local.provider = "local";
  const char* path = std::getenv("PATH");
  if (auto missing = missing_programs({local}, path ? path : ""); !missing.empty()) {
    std::cerr << "error: the demo cannot run: " << missing_programs_message(missing);
    return kExitServerError;
  }
  return Demo(options).run();
}

}  // namespace orch
