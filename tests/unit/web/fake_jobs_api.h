#pragma once
// A scripted JobsApi for the web and CLI tests: clusters alpha and beta-long-name, jobs 1 and 2
// (every other id is not found), each with its attempts, events, explanation and logs.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "tests/unit/web/fake_api_shared.h"
#include "web/jobs_api.h"

namespace orch::testing {

class FakeJobsApi : public virtual JobsApi, public virtual FakeApiShared {
 public:
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
  std::string last_body, last_source, last_cluster, last_owner;
  Submitter last_submitter;
  bool last_down = false;
  int log_calls = 0;

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
                             {"updated_ms", 1700000000000},
                             {"state", "active"},
                             {"failures", 0},
                             {"failures_to_quarantine", 2},
                             {"window_h", 168},
                             {"work_failures", 0},
                             {"work_gpu_hours", 0.0},
                             {"rate_per_gpu_h", 0.0},
                             {"cluster_rate_per_gpu_h", 0.000125},
                             {"rate_ratio", 0.0},
                             {"rate_p_value", 1.0},
                             {"lemon", false},
                             {"count_rule", true},
                             {"rate_evidence", "0 failures in 0 GPU-hours"},
                             {"next_failure", "2 more failures within 7 days quarantine it"}},
                            {{"name", "a2"},
                             {"gpus", 8},
                             {"healthy", false},
                             {"reason", "drain: Xid 79"},
                             {"updated_ms", 1700000200000},
                             {"state", "active"},
                             {"failures", 1},
                             {"failures_to_quarantine", 2},
                             {"window_h", 168},
                             {"work_failures", 0},
                             {"work_gpu_hours", 0.0},
                             {"rate_per_gpu_h", 0.0},
                             {"cluster_rate_per_gpu_h", 0.000125},
                             {"rate_ratio", 0.0},
                             {"rate_p_value", 1.0},
                             {"lemon", false},
                             {"count_rule", true},
                             {"rate_evidence", "0 failures in 0 GPU-hours"},
                             {"next_failure", "the next failure quarantines it"}}}},
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
                                {"interval_steps", 9035},  {"restart_s", 300}};
      j["checkpoint_advice"]["around"] = nlohmann::json::array(
          {{{"interval_s", 948.7}, {"interval_steps", 4518}, {"ettr", 0.9}},
           {{"interval_s", 1897.4}, {"interval_steps", 9035}, {"ettr", 0.93}},
           {{"interval_s", 3794.8}, {"interval_steps", 18070}, {"ettr", 0.91}}});
      j["checkpoint_advice"]["spares"] = {{"recommended", 1},
                                          {"failures_per_day", 2.88},
                                          {"hot_restart_s", 30},
                                          {"options",
                                           {{{"spares", 0},
                                             {"covered", 0},
                                             {"gained_gpu_h_per_day", 0},
                                             {"paid_gpu_h_per_day", 0},
                                             {"net_gpu_h_per_day", 0}},
                                            {{"spares", 1},
                                             {"covered", 0.9},
                                             {"gained_gpu_h_per_day", 310.4},
                                             {"paid_gpu_h_per_day", 192},
                                             {"net_gpu_h_per_day", 118.4}}}}};
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
                             {"nodes", {"n1", "n2"}},
                             {"failed_node", "n2"},
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
                             {"recovery",
                              {{"after", "node_lost"},
                               {"text",
                                "41.5 s: detection 7.0 s, backoff 0.0 s, placing 0.5 s, "
                                "site 4.0 s, startup 30.0 s"}}},
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
  Result<nlohmann::json> submit_job(const std::string& body, const std::string& source,
                                    const Submitter& who) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    last_body = body;
    last_source = source;
    last_owner = who.user;
    last_submitter = who;
    if (body.find("bad") != std::string::npos) {
      return make_error(ErrorKind::invalid, source + ":2:7: gpus_per_node must be positive");
    }
    return nlohmann::json{{"id", 3}, {"name", "new-job"}, {"state", "pending"}};
  }
  // Job 1 is alice's; the others are bob's.
  Result<nlohmann::json> cancel_job(std::int64_t id, const std::string& only_owner) override {
    std::lock_guard lock(mu_);
    if (auto e = check(id)) return *e;
    if (!only_owner.empty() && only_owner != (id == 1 ? "alice" : "bob")) {
      return make_error(ErrorKind::forbidden, only_owner + " may cancel only their own jobs");
    }
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

 private:
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
};

}  // namespace orch::testing
