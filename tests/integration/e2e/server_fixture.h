#pragma once
// The base of every end-to-end fixture: a fresh temp dir with a clusters file, a real
// `orchestrate serve` on it (started and restarted on the same state dir), what a test does
// with a job over REST (submit, read, wait by polling), and the server's logs printed when a
// test fails. E2eTest (local sites) and SlurmE2eTest (a real Slurm lab) add their clusters.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "testkit/server_process.h"

namespace orch::e2e {

using nlohmann::json;

inline bool is_final(const json& job) {
  const std::string s = job.value("state", "");
  return s == "succeeded" || s == "failed" || s == "cancelled";
}

class ServerFixture : public ::testing::Test {
 protected:
  // Writes the clusters file into a fresh temp dir and starts the server on it.
  void start_with(const std::string& clusters_yaml) {
    dir_ = std::make_unique<TempDir>();
    state_ = dir_->path() + "/state";
    config_ = dir_->path() + "/clusters.yaml";
    write_file(config_, clusters_yaml);
    start_server();
  }

  void TearDown() override {
    if (server_) server_->stop();
    if (HasFailure()) {
      for (int i = 1; i <= starts_; ++i) {
        std::cerr << "---- server log " << i << ":\n" << read_file(log_path(i)) << "\n";
      }
      on_failure();
    }
    before_cleanup();
    server_.reset();
    dir_.reset();
  }
  virtual void on_failure() {}      // more to print when a test failed
  virtual void before_cleanup() {}  // runs before the temp dir goes

  std::string log_path(int n) const {
    return dir_->path() + "/server-" + std::to_string(n) + ".log";
  }

  // Starts (or restarts, on the same state dir) the server, with `faults` in ORCH_FAULTS;
  // fails the test if it does not come up.
  void start_server(const std::string& faults = "") {
    if (!faults.empty()) setenv("ORCH_FAULTS", faults.c_str(), 1);
    std::string error;
    server_ = ServerProcess::start(config_, state_, log_path(++starts_), error, milliseconds(20000),
                                   record_url_, port_);
    unsetenv("ORCH_FAULTS");
    ASSERT_TRUE(server_) << "orchestrate serve did not start: " << error;
    url_ = server_->url();
  }

  // POSTs a YAML spec; returns the new id, or 0 (after a test failure) when it was refused.
  std::int64_t submit(const std::string& yaml) {
    HttpResponse r = call(url_, "POST", "/api/v1/jobs", yaml, "application/yaml");
    EXPECT_EQ(r.status, 201) << r.body << "\nspec:\n" << yaml;
    json j = json::parse(r.body, nullptr, false);
    if (r.status != 201 || !j.is_object() || !j["id"].is_number_integer()) return 0;
    return j["id"].get<std::int64_t>();
  }
  // The `orchestrate` CLI against this server as its administrator on this machine:
  // `orchestrate --server URL --state STATE args...` (it sends STATE/admin.token).
  ProcessResult cli(std::vector<std::string> args) {
    args.insert(args.begin(), {ORCH_BIN_DIR "/orchestrate", "--server", url_, "--state", state_});
    return run_process(args, milliseconds(90000));
  }
  // `orchestrate job submit FILE` with the CLI (which packs and uploads a `workdir:`): the new
  // id, its last line (what it packed and sent comes first on stderr); 0 after a test failure.
  std::int64_t submit_file(const std::string& path) {
    ProcessResult r = cli({"job", "submit", path});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::string out = r.output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return std::atoll(out.substr(out.find_last_of('\n') + 1).c_str());
  }
  // The server's copies of a job's code to `cluster`: transfers from its code store (issue 40).
  int code_copies_to(const std::string& cluster) {
    json list = get_json(url_, "/api/v1/data/transfers?all=true&limit=500");
    int n = 0;
    for (const auto& t : list["transfers"]) {
      n += t["from"]["cluster"] == "orchestrate-server" && t["to"]["cluster"] == cluster ? 1 : 0;
    }
    return n;
  }
  json job(std::int64_t id) { return get_json(url_, "/api/v1/jobs/" + std::to_string(id)); }
  // One cluster as `GET /api/v1/clusters` shows it; null when the server does not list it.
  json cluster_row(const std::string& name) {
    json list = get_json(url_, "/api/v1/clusters");
    if (!list.is_object() || !list["clusters"].is_array()) return nullptr;
    for (const auto& c : list["clusters"]) {
      if (c.value("name", "") == name) return c;
    }
    return nullptr;
  }
  // The node of the cluster's one ready hot spare once it has one (not `not_this`); empty when
  // none came within `timeout`.
  std::string ready_spare(const std::string& cluster, milliseconds timeout,
                          const std::string& not_this = "") {
    std::string node;
    eventually(
        [&] {
          json c = cluster_row(cluster);
          if (!c.is_object() || c["spares"]["ready"] != 1) return false;
          node = c["spares"]["nodes"][0]["node"].get<std::string>();
          return node != not_this;
        },
        timeout);
    return node;
  }
  json attempts(std::int64_t id) { return job_list(id, "attempts"); }
  // Waits for the job to end and returns its attempts; a job that did not succeed fails the
  // test and gives null.
  json succeeded_attempts(std::int64_t id) {
    json done = wait_final(id);
    if (done.is_null() || done["state"] != "succeeded") {
      ADD_FAILURE() << "job " << id << " did not succeed" << describe_job(url_, id);
      return nullptr;
    }
    return attempts(id);
  }
  // The nodes an attempt ran on.
  static std::set<std::string> node_set(const json& attempt) {
    std::set<std::string> out;
    for (const auto& n : attempt["nodes"]) out.insert(n.get<std::string>());
    return out;
  }
  // Issue 14's acceptance, the same on every provider: with `node` of alpha quarantined by hand,
  // a gang as wide as alpha (`gang_yaml`, allowed on alpha and beta) runs on beta, on `nodes`
  // nodes, once.
  void expect_full_gang_goes_to_beta(const std::string& node, const std::string& gang_yaml,
                                     std::size_t nodes) {
    // A node can be quarantined once its site has listed it (404 before: the server starts
    // with no inventory yet).
    HttpResponse q;
    eventually(
        [&] {
          q = call(url_, "POST", "/api/v1/clusters/alpha/nodes/" + node + "/quarantine",
                   R"({"reason":"bad cable"})", "application/json");
          return q.status != 404 || q.body.find("not reported its nodes") == std::string::npos;
        },
        milliseconds(10000));
    ASSERT_EQ(q.status, 200) << q.body;
    const std::int64_t id = submit(gang_yaml);
    ASSERT_GT(id, 0);
    json list = succeeded_attempts(id);
    ASSERT_EQ(list.size(), 1u) << list.dump();
    EXPECT_EQ(list[0]["cluster"], "beta") << list.dump();
    EXPECT_EQ(node_set(list[0]).size(), nodes) << list.dump();
  }
  json events(std::int64_t id) { return job_list(id, "events"); }

  // Every place orchestrate answers or writes, searched for each secret: the API's answers to
  // job id's routes and the lists, every server log, and every file of the state directory
  // (both databases and their WAL, run directories, request.json). A job's own output is the
  // job's: a test's job prints only hashes.
  void expect_secrets_nowhere(const std::vector<std::string>& secrets, std::int64_t id) {
    const std::string base = "/api/v1/jobs/" + std::to_string(id);
    for (const std::string& target :
         {std::string("/api/v1/jobs"), base, base + "/attempts", base + "/events",
          base + "/explain", base + "/checkpoints", std::string("/api/v1/audit"),
          std::string("/api/v1/clusters"), std::string("/api/v1/reports/providers")}) {
      HttpResponse r = call(url_, "GET", target);
      EXPECT_EQ(r.status, 200) << target;
      for (const std::string& secret : secrets) {
        EXPECT_EQ(r.body.find(secret), std::string::npos) << target << ": " << r.body;
      }
    }
    for (int i = 1; i <= starts_; ++i) {
      const std::string log = read_file(log_path(i));
      for (const std::string& secret : secrets) {
        EXPECT_EQ(log.find(secret), std::string::npos) << "server log " << i;
      }
    }
    int files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(state_)) {
      if (!entry.is_regular_file()) continue;
      ++files;
      const std::string bytes = read_file(entry.path().string());
      for (const std::string& secret : secrets) {
        EXPECT_EQ(bytes.find(secret), std::string::npos) << entry.path();
      }
    }
    EXPECT_GT(files, 5);
  }

  // Polls until what() holds; false after timeout.
  bool eventually(const std::function<bool()>& what, milliseconds timeout = milliseconds(60000)) {
    const auto deadline = SteadyClock::now() + timeout;
    while (SteadyClock::now() < deadline) {
      if (what()) return true;
      std::this_thread::sleep_for(poll_);
    }
    return what();
  }
  // Polls the job every poll_ until done(job) holds; on timeout fails the test with the job,
  // its attempts and events, and returns null.
  json wait_job(std::int64_t id, const std::function<bool(const json&)>& done,
                const std::string& what, std::optional<milliseconds> timeout = std::nullopt) {
    const milliseconds limit = timeout.value_or(wait_timeout_);
    const auto deadline = SteadyClock::now() + limit;
    while (SteadyClock::now() < deadline) {
      json j = job(id);
      if (j.is_object() && done(j)) return j;
      std::this_thread::sleep_for(poll_);
    }
    ADD_FAILURE() << "timed out after " << limit.count() << " ms waiting for job " << id << " to "
                  << what << describe_job(url_, id);
    return nullptr;
  }
  json wait_final(std::int64_t id) { return wait_job(id, is_final, "finish", final_timeout_); }
  // Waits (up to two minutes) until the job trains on `cluster` at step `min_step` or later
  // with a checkpoint of it copied to another site: the moment a site outage can be survived.
  json wait_trained_with_replica(std::int64_t id, const std::string& cluster,
                                 std::int64_t min_step) {
    return wait_job(
        id,
        [&](const json& now) {
          if (now["cluster"] != cluster || !now["step"].is_number() || now["step"] < min_step) {
            return false;
          }
          for (const auto& e : events(id)) {
            if (e["kind"] == "checkpoint-replicated") return true;
          }
          return false;
        },
        "train on " + cluster + " with a checkpoint copied off-site", milliseconds(120000));
  }

  std::unique_ptr<TempDir> dir_;
  std::string state_;
  std::string config_;
  std::unique_ptr<ServerProcess> server_;
  std::string url_;
  int starts_ = 0;
  bool record_url_ = false;  // serve records its URL in the user's CLI config (newcomer's test)
  int port_ = 0;             // serve's --port (0: a free one)
  milliseconds poll_{50};
  milliseconds wait_timeout_{30000};
  milliseconds final_timeout_{30000};

 private:
  json job_list(std::int64_t id, const std::string& what) {
    json a = get_json(url_, "/api/v1/jobs/" + std::to_string(id) + "/" + what);
    return a.is_object() ? a[what] : json::array();
  }
};

}  // namespace orch::e2e
