#pragma once
// A scripted ApiBackend for the web and CLI tests: jobs 1 and 2 exist, everything else is
// not found; `fail` forces an error on every call. Thread-safe, since the server calls it
// from its own threads.

#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "web/api_backend.h"

namespace orch::testing {

class FakeBackend : public ApiBackend {
 public:
  std::optional<Error> fail;
  bool throw_everywhere = false;  // every call that looks at `fail` throws instead (guard tests)
  bool throw_on_list_clusters = false;
  std::string job1_state = "running";
  std::string logs = "step 1 loss 2.0\nstep 2 loss 1.5\n";
  // When set, each logs call for job 1 after the first appends one line, and the job becomes
  // succeeded once `finish_after_logs` calls were made (for --follow).
  int finish_after_logs = 0;

  JobFilter last_filter;
  std::optional<std::string> next_cursor;  // the "next" of list_jobs' page
  int last_event_limit = 0;
  LogRequest last_log;
  std::string last_body, last_source, last_cluster;
  bool last_down = false;
  int log_calls = 0;

  // Health. alpha's admission; once burn_in_polls > 0, list_clusters reports it as burn-in
  // that many more times and then active (for `cluster burn-in --wait`).
  std::string alpha_admission = "active";
  int burn_in_polls = 0;
  NodeFilter last_node_filter;
  std::string last_node, last_reason, last_probe_node;
  bool last_quarantine = false;
  int last_probe_limit = 0;
  int last_window_days = 0;
  int burn_ins = 0;

  // Checkpoints and data. Job 1 has two checkpoints, job 2 none; datasets imagenet and tiny.
  // Transfer 7 (a checkpoint, running at 45%) and 8 (a dataset, queued) are active, 6 is done.
  // Once active_rounds >= 0, each list_transfers call uses one round up and, at 0, 7 and 8 are
  // done (for `data transfers --watch`).
  int active_rounds = -1;
  int transfer_calls = 0;
  TransferFilter last_transfer_filter;
  std::string last_dataset, last_dataset_cluster, last_dataset_path, last_audit_cluster;
  ReplicateRequest last_replicate;
  int audits = 0;

  Result<nlohmann::json> list_clusters() override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (throw_on_list_clusters) throw std::runtime_error("boom");
    std::string admission = alpha_admission;
    if (burn_in_polls > 0 && --burn_in_polls == 0) alpha_admission = "active";
    return nlohmann::json{{"clusters",
                           {{{"name", "alpha"},
                             {"vendor", "acme"},
                             {"admission", admission},
                             {"provider", "local"},
                             {"nodes", 2},
                             {"gpus_per_node", 8},
                             {"accelerator", "H100"},
                             {"peak_tflops", 989},
                             {"health", "healthy"},
                             {"gpus_total", 16},
                             {"gpus_used", 8},
                             {"nodes_healthy", 2},
                             {"message", ""}},
                            {{"name", "beta-long-name"},
                             {"vendor", "beta-long-name"},
                             {"admission", "pending"},
                             {"provider", "slurm"},
                             {"nodes", 4},
                             {"gpus_per_node", 8},
                             {"accelerator", "A100"},
                             {"peak_tflops", 312},
                             {"health", "down"},
                             {"gpus_total", 32},
                             {"gpus_used", 0},
                             {"message", "marked down by operator"}}}}};
  }
  Result<nlohmann::json> cluster_nodes(const std::string& cluster, int event_limit) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (cluster != "alpha") {
      return make_error(ErrorKind::not_found, "no cluster named \"" + cluster + "\"");
    }
    last_event_limit = event_limit;
    nlohmann::json events = {{{"id", 3},
                              {"at_ms", 1700000300000},
                              {"node", "a2"},
                              {"kind", "node-failure"},
                              {"message", "node failure under job 1 attempt 1 (site job 42)"},
                              {"job_id", 1},
                              {"attempt_no", 1}},
                             {{"id", 2},
                              {"at_ms", 1700000200000},
                              {"node", "a2"},
                              {"kind", "node-unhealthy"},
                              {"message", "node a2 turned unhealthy: drain: Xid 79"},
                              {"job_id", nullptr},
                              {"attempt_no", nullptr}}};
    while (static_cast<int>(events.size()) > event_limit) events.erase(events.size() - 1);
    return nlohmann::json{{"cluster", "alpha"},
                          {"nodes",
                           {{{"name", "a1"},
                             {"gpus", 8},
                             {"healthy", true},
                             {"reason", ""},
                             {"updated_ms", 1700000000000}},
                            {{"name", "a2"},
                             {"gpus", 8},
                             {"healthy", false},
                             {"reason", "drain: Xid 79"},
                             {"updated_ms", 1700000200000}}}},
                          {"events", events}};
  }
  Result<JsonText> list_jobs(const JobFilter& filter) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    last_filter = filter;
    const nlohmann::json next = next_cursor ? nlohmann::json(*next_cursor) : nullptr;
    return JsonText{nlohmann::json{{"jobs", {job(1), job(2)}}, {"next", next}}.dump()};
  }
  Result<JsonText> get_job(std::int64_t id) override {
    std::lock_guard lock(mu_);
    if (auto e = check(id)) return *e;
    nlohmann::json j = job(id);
    j["spec"] = {{"name", j["name"]}};
    j["checkpoint_advice"] = nullptr;
    if (id == 1) {
      j["checkpoint_advice"] = {{"cluster", "alpha"},      {"interval_s", 1897.4},
                                {"checkpoint_cost_s", 60}, {"job_mtbf_h", 8.33},
                                {"expected_mfu", 0.41},    {"ettr", 0.93},
                                {"interval_steps", 9035}};
    }
    return JsonText{j.dump()};
  }
  Result<nlohmann::json> job_attempts(std::int64_t id) override {
    std::lock_guard lock(mu_);
    if (auto e = check(id)) return *e;
    return nlohmann::json{{"attempts",
                           {{{"no", 1},
                             {"cluster", "beta-long-name"},
                             {"token", "t1"},
                             {"state", "exited"},
                             {"cause", "node_lost"},
                             {"exit_code", nullptr},
                             {"signal", nullptr},
                             {"site_job_id", "42"},
                             {"nodes", {"n1"}},
                             {"started_ms", 1700000000000},
                             {"ended_ms", 1700000100000},
                             {"resumed_from", nullptr},
                             {"first_step", 0},
                             {"last_step", 500},
                             {"mfu", 0.38},
                             {"steps_lost", 120}},
                            {{"no", 2},
                             {"cluster", "alpha"},
                             {"token", "t2"},
                             {"state", "running"},
                             {"cause", "none"},
                             {"exit_code", nullptr},
                             {"signal", nullptr},
                             {"site_job_id", "7"},
                             {"nodes", {"a1", "a2"}},
                             {"started_ms", 1700000200000},
                             {"ended_ms", nullptr},
                             {"resumed_from", {{"step", 380}, {"path", "/ckpt/380"}}},
                             {"first_step", 380},
                             {"last_step", 1200},
                             {"mfu", 0.412},
                             {"steps_lost", 0}}}}};
  }
  Result<nlohmann::json> job_events(std::int64_t id) override {
    std::lock_guard lock(mu_);
    if (auto e = check(id)) return *e;
    nlohmann::json events = nlohmann::json::array();
    for (int i = 1; i <= 12; ++i) {
      events.push_back({{"at_ms", 1700000000000 + i * 1000},
                        {"kind", "event" + std::to_string(i)},
                        {"message", "message number " + std::to_string(i)},
                        {"attempt_no", i > 6 ? 2 : 1}});
    }
    return nlohmann::json{{"events", events}};
  }
  Result<nlohmann::json> explain_job(std::int64_t id) override {
    std::lock_guard lock(mu_);
    if (auto e = check(id)) return *e;
    return nlohmann::json{
        {"job_id", id},
        {"evaluated_at_ms", 1700000000000},
        {"chosen", "alpha"},
        {"clusters",
         {{{"cluster", "alpha"}, {"feasible", true}, {"reason", ""}, {"score", 1234.5}},
          {{"cluster", "beta-long-name"},
           {"feasible", false},
           {"reason", "cluster is down"},
           {"score", nullptr}}}}};
  }
  Result<nlohmann::json> submit_job(const std::string& body, const std::string& source) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    last_body = body;
    last_source = source;
    if (body.find("bad") != std::string::npos) {
      return make_error(ErrorKind::invalid, source + ":2:7: gpus_per_node must be positive");
    }
    return nlohmann::json{{"id", 3}, {"name", "new-job"}, {"state", "pending"}};
  }
  Result<nlohmann::json> cancel_job(std::int64_t id) override {
    std::lock_guard lock(mu_);
    if (auto e = check(id)) return *e;
    if (id == 2) return make_error(ErrorKind::conflict, "job 2 already succeeded");
    return nlohmann::json{{"id", id}, {"state", "running"}};
  }
  Result<std::string> job_logs(std::int64_t id, const LogRequest& request) override {
    std::lock_guard lock(mu_);
    if (auto e = check(id)) return *e;
    last_log = request;
    ++log_calls;
    if (finish_after_logs > 0 && id == 1) {
      if (log_calls > 1 && log_calls <= finish_after_logs) {
        logs += "step " + std::to_string(log_calls + 1) + "\n";
      }
      if (log_calls >= finish_after_logs) job1_state = "succeeded";
    }
    if (request.offset >= logs.size()) return std::string();
    return logs.substr(request.offset);
  }
  Result<nlohmann::json> set_cluster_outage(const std::string& cluster, bool down) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (cluster != "alpha" && cluster != "beta gamma") {
      return make_error(ErrorKind::not_found, "no cluster named '" + cluster + "'");
    }
    last_cluster = cluster;
    last_down = down;
    return nlohmann::json{{"cluster", cluster}, {"down", down}};
  }

  Result<nlohmann::json> list_nodes(const NodeFilter& filter) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    last_node_filter = filter;
    if (filter.cluster && *filter.cluster != "alpha" && *filter.cluster != "beta-long-name") {
      return make_error(ErrorKind::not_found, "no cluster named \"" + *filter.cluster + "\"");
    }
    const nlohmann::json all = {
        node("alpha", "a1", "active", 0, nullptr, ""),
        node("alpha", "a2", "quarantined", 1, 1700000400000, "quarantined by hand: Xid 79 twice"),
        node("beta-long-name", "b1", "retired", 3, 1700000500000, "retired after 3 quarantines")};
    nlohmann::json out = nlohmann::json::array();
    for (const auto& n : all) {
      if (filter.cluster && n["cluster"] != *filter.cluster) continue;
      if (filter.state && n["state"] != *filter.state) continue;
      out.push_back(n);
    }
    return nlohmann::json{{"nodes", out}};
  }
  Result<nlohmann::json> set_node_state(const std::string& cluster, const std::string& name,
                                        bool quarantine, const std::string& reason) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (cluster != "alpha")
      return make_error(ErrorKind::not_found, "no cluster \"" + cluster + "\"");
    if (name != "a1" && name != "a2") {
      return make_error(ErrorKind::not_found,
                        "cluster alpha has no node \"" + name + "\"; its nodes: a1, a2");
    }
    last_node = name;
    last_reason = reason;
    last_quarantine = quarantine;
    return nlohmann::json{
        {"cluster", cluster}, {"node", name}, {"state", quarantine ? "quarantined" : "active"}};
  }
  Result<nlohmann::json> start_burn_in(const std::string& cluster) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (cluster != "alpha")
      return make_error(ErrorKind::not_found, "no cluster \"" + cluster + "\"");
    if (alpha_admission == "burn-in") {
      return make_error(ErrorKind::conflict,
                        "cluster alpha is already burning in (round r2); wait for it to finish");
    }
    ++burn_ins;
    alpha_admission = "burn-in";
    return nlohmann::json{{"cluster", cluster}, {"admission", "burn-in"}, {"round", "r2"}};
  }
  Result<nlohmann::json> cluster_probes(const std::string& cluster, const std::string& name,
                                        int limit) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (cluster != "alpha") {
      return make_error(ErrorKind::not_found, "no cluster named \"" + cluster + "\"");
    }
    last_probe_node = name;
    last_probe_limit = limit;
    const nlohmann::json all = {
        probe(3, "a2", "r2", false, "GEMM 41.2 GFLOP/s is 0.45 of the median 91.5", 41.2),
        probe(2, "a1", "r2", true, "ok", 91.5), probe(1, "a1", "r1", true, "ok", 90.1)};
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : all) {
      if (!name.empty() && p["node"] != name) continue;
      if (static_cast<int>(out.size()) < limit) out.push_back(p);
    }
    return nlohmann::json{{"cluster", cluster}, {"probes", out}};
  }
  Result<nlohmann::json> provider_report(int window_days) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    last_window_days = window_days;
    auto card = [](const std::string& name, const std::string& kind, nlohmann::json clusters) {
      return nlohmann::json{{"name", name},
                            {"kind", kind},
                            {"clusters", std::move(clusters)},
                            {"availability", 0.9875},
                            {"gpu_hours", 1234.5},
                            {"interruptions", 3},
                            {"interruptions_per_1k_gpu_h", 2.43},
                            {"node_mtbf_h", 410.2},
                            {"median_detect_to_resume_s", 95},
                            {"median_mfu", 0.412},
                            {"checkpoint_save_p95_s", 12.5},
                            {"nodes", 2},
                            {"quarantined_nodes", 1},
                            {"quarantined_share", 0.5}};
    };
    nlohmann::json beta = card("beta-long-name", "cluster", {"beta-long-name"});
    for (const char* k : {"interruptions_per_1k_gpu_h", "node_mtbf_h", "median_detect_to_resume_s",
                          "median_mfu", "checkpoint_save_p95_s"}) {
      beta[k] = nullptr;
    }
    beta["interruptions"] = 0;
    return nlohmann::json{
        {"window_start_ms", 1700000000000 - window_days * 86400000LL},
        {"now_ms", 1700000000000},
        {"cards", {card("alpha", "cluster", {"alpha"}), beta, card("acme", "vendor", {"alpha"})}}};
  }
  Result<nlohmann::json> job_mfu(std::int64_t id) override {
    std::lock_guard lock(mu_);
    if (auto e = check(id)) return *e;
    return nlohmann::json{{"job_id", id},
                          {"attempts",
                           {{{"no", 1},
                             {"cluster", "alpha"},
                             {"nodes", {"a1", "a2"}},
                             {"buckets",
                              {{{"at_ms", 1700000040000}, {"mfu", 0.41}, {"samples", 12}},
                               {{"at_ms", 1700000100000}, {"mfu", 0.39}, {"samples", 11}}}}}}}};
  }

  Result<nlohmann::json> job_checkpoints(std::int64_t id) override {
    std::lock_guard lock(mu_);
    if (auto e = check(id)) return *e;
    nlohmann::json list = nlohmann::json::array();
    if (id == 1) {
      list.push_back(
          checkpoint(12, 1000, 1500000000, 3,
                     {replica(21, "alpha", "verified"), replica(22, "beta-long-name", "copying")}));
      list.push_back(checkpoint(11, 500, nullptr, nullptr, {replica(20, "alpha", "present")}));
      list[1]["verified"] = false;
    }
    return nlohmann::json{{"job", id}, {"checkpoints", list}};
  }
  Result<nlohmann::json> list_datasets() override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    nlohmann::json imagenet = {{"name", "imagenet"},
                               {"bytes", 1200000000000},
                               {"files", 1281167},
                               {"created_ms", 1700000000000},
                               {"replicas",
                                {replica(30, "alpha", "verified", "imagenet"),
                                 replica(31, "beta-long-name", "missing", "imagenet")}}};
    nlohmann::json tiny = {{"name", "tiny"},
                           {"bytes", nullptr},
                           {"files", nullptr},
                           {"created_ms", 1700000100000},
                           {"replicas", nlohmann::json::array()}};
    return nlohmann::json{{"datasets", {imagenet, tiny}}};
  }
  Result<nlohmann::json> register_dataset(const std::string& name, const std::string& cluster,
                                          const std::string& path) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (auto e = check_cluster(cluster)) return *e;
    if (cluster == "beta-long-name") {
      return make_error(ErrorKind::unsupported,
                        "cluster beta-long-name (provider kubernetes) cannot hold datasets yet");
    }
    last_dataset = name;
    last_dataset_cluster = cluster;
    last_dataset_path = path;
    return nlohmann::json{{"name", name},
                          {"message", "dataset " + name + " registered at " + cluster + ":" + path +
                                          "; its manifest is computed there"}};
  }
  Result<nlohmann::json> replicate_data(const ReplicateRequest& request) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (auto e = check_cluster(request.to)) return *e;
    last_replicate = request;
    if (request.job_id > 0) {
      if (auto e = check(request.job_id)) return *e;
      if (request.job_id == 2) {
        return nlohmann::json{{"transfer", nullptr},
                              {"message", "job 2 has no verified checkpoint to copy"}};
      }
      return nlohmann::json{
          {"transfer", 7},
          {"message", "copying checkpoint 12 of job 1 (step 1000) to " + request.to}};
    }
    if (request.dataset == "tiny") {
      return nlohmann::json{{"transfer", nullptr},
                            {"message", "dataset tiny is already verified at " + request.to}};
    }
    if (request.dataset != "imagenet") {
      return make_error(ErrorKind::not_found, "no dataset named \"" + request.dataset + "\"");
    }
    return nlohmann::json{{"transfer", 8},
                          {"message", "copying dataset imagenet to " + request.to}};
  }
  Result<nlohmann::json> list_transfers(const TransferFilter& filter) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    last_transfer_filter = filter;
    ++transfer_calls;
    bool active = true;
    if (active_rounds >= 0) {
      active = active_rounds > 0;
      if (active_rounds > 0) --active_rounds;
    }
    nlohmann::json all = nlohmann::json::array();
    all.push_back(active ? transfer(7, "running", 675000000) : transfer(7, "done", 1500000000));
    all.push_back(active ? transfer(8, "queued", 0) : transfer(8, "done", 1500000000));
    all.push_back(transfer(6, "done", 1500000000));
    nlohmann::json out = nlohmann::json::array();
    for (const auto& t : all) {
      if (!filter.all && (t["state"] == "done" || t["state"] == "failed")) continue;
      if (static_cast<int>(out.size()) < filter.limit) out.push_back(t);
    }
    return nlohmann::json{{"transfers", out}};
  }
  Result<nlohmann::json> get_transfer(std::int64_t id) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (id == 6) return transfer(6, "done", 1500000000);
    if (id == 7) return transfer(7, "running", 675000000);
    if (id == 8) return transfer(8, "queued", 0);
    return make_error(ErrorKind::not_found, "no transfer with id " + std::to_string(id));
  }
  Result<nlohmann::json> start_audit(const std::string& cluster) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (!cluster.empty()) {
      if (auto e = check_cluster(cluster)) return *e;
    }
    last_audit_cluster = cluster;
    ++audits;
    return nlohmann::json{{"message", cluster.empty() ? "auditing 3 copies at every cluster"
                                                      : "auditing 2 copies at " + cluster}};
  }

 private:
  static std::optional<Error> check_cluster(const std::string& cluster) {
    if (cluster == "alpha" || cluster == "beta-long-name") return std::nullopt;
    return make_error(ErrorKind::invalid,
                      "no cluster named \"" + cluster + "\"; configured: alpha, beta-long-name");
  }
  static nlohmann::json replica(int id, const std::string& cluster, const std::string& state,
                                const std::string& dataset = "") {
    const std::string root = cluster == "alpha" ? "/ckpt/" : "/mnt/ckpt/";
    return {{"id", id},
            {"cluster", cluster},
            {"path", dataset.empty() ? root + "1000" : "/data/" + dataset},
            {"state", state},
            {"detail", state == "missing" ? "gone at the last audit" : ""},
            {"updated_ms", 1700000200000},
            {"verified_ms", state == "verified" ? nlohmann::json(1700000100000) : nullptr},
            {"audited_ms", nullptr}};
  }
  static nlohmann::json checkpoint(int id, int step, nlohmann::json bytes, nlohmann::json files,
                                   nlohmann::json replicas) {
    return {{"id", id},
            {"step", step},
            {"path", "/ckpt/" + std::to_string(step)},
            {"cluster", "alpha"},
            {"bytes", std::move(bytes)},
            {"save_time_s", 12.5},
            {"at_ms", 1700000000000 + step * 1000},
            {"verified", true},
            {"files", std::move(files)},
            {"replicas", std::move(replicas)}};
  }
  // Transfer 7 copies checkpoint 12 of job 1 (1.5 GB) at 50 MB/s capped at 25 of 100 MB/s;
  // 8 copies dataset imagenet; 6 copied checkpoint 11.
  static nlohmann::json transfer(int id, const std::string& state, std::int64_t done) {
    const bool running = state == "running";
    const std::int64_t total = id == 8 ? 0 : 1500000000;
    nlohmann::json percent = nullptr;
    if (state == "done") percent = 100.0;
    if (total > 0 && state != "done") percent = 100.0 * static_cast<double>(done) / total;
    return {
        {"id", id},
        {"what", id == 8   ? "dataset imagenet"
                 : id == 7 ? "checkpoint 12 of job 1 (step 1000)"
                           : "checkpoint 11 of job 1 (step 500)"},
        {"checkpoint", id == 8 ? nlohmann::json(nullptr) : nlohmann::json(id == 7 ? 12 : 11)},
        {"dataset", id == 8 ? nlohmann::json("imagenet") : nlohmann::json(nullptr)},
        {"from", {{"cluster", "alpha"}, {"path", "/ckpt/1000"}}},
        {"to", {{"cluster", "beta-long-name"}, {"path", "/mnt/ckpt/1000"}}},
        {"state", state},
        {"why", id == 8 ? "staging job 2" : "replication"},
        {"bytes_total", total},
        {"bytes_done", done},
        {"percent", percent},
        {"rate_mb_s", running ? nlohmann::json(50.0) : nullptr},
        {"cap_mb_s", id == 7 ? nlohmann::json(25.0) : nullptr},
        {"base_cap_mb_s", id == 7 ? nlohmann::json(100.0) : nullptr},
        {"tries", running ? 2 : 1},
        {"error", running ? "rsync exit 12: connection reset" : ""},
        {"route", "beta-long-name pulls from alpha"},
        {"created_ms", 1700000000000},
        {"started_ms", state == "queued" ? nlohmann::json(nullptr) : nlohmann::json(1700000010000)},
        {"ended_ms", state == "done" ? nlohmann::json(1700000060000) : nullptr},
        {"next_try_ms", nullptr}};
  }
  static nlohmann::json node(const std::string& cluster, const std::string& name,
                             const std::string& state, int quarantines, nlohmann::json at,
                             const std::string& why) {
    return {{"cluster", cluster},
            {"name", name},
            {"gpus", 8},
            {"healthy", name != "a2"},
            {"reason", name == "a2" ? "drain: Xid 79" : ""},
            {"state", state},
            {"quarantines", quarantines},
            {"quarantined_at_ms", std::move(at)},
            {"state_reason", why},
            {"seen_ms", 1700000000000}};
  }
  static nlohmann::json probe(int id, const std::string& name, const std::string& round,
                              bool passed, const std::string& reason, double gflops) {
    return {{"id", id},
            {"cluster", "alpha"},
            {"node", name},
            {"round", round},
            {"at_ms", 1700000000000 + id * 1000},
            {"passed", passed},
            {"reason", reason},
            {"gemm_gflops", gflops},
            {"write_mb_s", 812.34},
            {"read_mb_s", nullptr},
            {"result", {{"node", name}, {"gemm_gflops", gflops}}}};
  }
  // The forced failure, if any; throws instead when throw_everywhere is set.
  std::optional<Error> failure() const {
    if (throw_everywhere) throw std::runtime_error("the backend threw");
    return fail;
  }
  std::optional<Error> check(std::int64_t id) {
    if (auto e = failure()) return e;
    if (id != 1 && id != 2) {
      return make_error(ErrorKind::not_found, "no job with id " + std::to_string(id));
    }
    return std::nullopt;
  }
  nlohmann::json job(std::int64_t id) const {
    return {{"id", id},
            {"name", id == 1 ? "llama-8b" : "bert"},
            {"state", id == 1 ? job1_state : "succeeded"},
            {"nodes", 2},
            {"gpus_per_node", 8},
            {"cluster", id == 1 ? nlohmann::json("alpha") : nlohmann::json(nullptr)},
            {"attempts", id == 1 ? 2 : 1},
            {"infra_restarts", id == 1 ? 1 : 0},
            {"user_restarts", 0},
            {"step", id == 1 ? nlohmann::json(1200) : nlohmann::json(nullptr)},
            {"mfu", id == 1 ? nlohmann::json(0.412) : nlohmann::json(nullptr)},
            {"steps_lost", 120},
            {"ettr", 0.93},
            {"last_checkpoint", {{"step", 1000}, {"path", "/ckpt/1000"}}},
            {"reason", id == 1 ? "" : "finished"},
            {"created_ms", 1700000000000},
            {"updated_ms", 1700000300000}};
  }
  std::mutex mu_;
};

}  // namespace orch::testing
