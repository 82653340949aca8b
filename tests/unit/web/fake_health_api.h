#pragma once
// A scripted HealthApi for the web and CLI tests: nodes a1 (active) and a2 (quarantined) of
// alpha, b1 (retired) of beta-long-name, probes of burn-in rounds r1 and r2 on alpha, provider
// scorecards and an MFU history for jobs 1 and 2. start_burn_in turns alpha's admission
// (fake_api_shared.h) to burn-in.

#include <cstdint>
#include <string>

#include "tests/unit/web/fake_api_shared.h"
#include "web/health_api.h"

namespace orch::testing {

class FakeHealthApi : public virtual HealthApi, public virtual FakeApiShared {
 private:
  Result<nlohmann::json> ticket_at(std::int64_t id) {
    if (auto e = failure()) return *e;
    if (id < 1 || id > static_cast<std::int64_t>(tickets.size())) {
      return make_error(ErrorKind::not_found, "no ticket " + std::to_string(id));
    }
    return tickets[static_cast<std::size_t>(id - 1)];
  }

 public:
  NodeFilter last_node_filter;
  std::string last_node, last_reason, last_probe_node;
  bool last_quarantine = false;
  int last_probe_limit = 0;
  int last_window_days = 0;
  int burn_ins = 0;
  int checks = 0;  // check_cluster calls

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
  Result<nlohmann::json> set_cluster_admission(const std::string& cluster, const std::string& to,
                                               const std::string& reason) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (cluster != "alpha")
      return make_error(ErrorKind::not_found, "no cluster \"" + cluster + "\"");
    if (alpha_admission == "retired") {
      return make_error(ErrorKind::conflict,
                        "cluster alpha is retired; a retired cluster does not come back");
    }
    last_reason = reason;
    alpha_admission = to;
    return nlohmann::json{{"cluster", cluster}, {"admission", to}};
  }
  std::string reload_error;  // set: the next reload fails with it (invalid)
  Result<nlohmann::json> reload_clusters() override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (!reload_error.empty()) return make_error(ErrorKind::invalid, reload_error);
    return nlohmann::json{{"added", nlohmann::json::array()},
                          {"removed", {"beta-long-name"}},
                          {"message", "cluster beta-long-name is no longer in the file: draining"}};
  }
  std::string added_document;  // what the last add_clusters was sent, and its source
  std::string added_source;
  Result<nlohmann::json> add_clusters(const std::string& document,
                                      const std::string& source) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    added_document = document;
    added_source = source;
    if (document.find("name: alpha") != std::string::npos) {
      return make_error(ErrorKind::conflict, "cluster \"alpha\" is already configured");
    }
    if (document.find("clusters:") == std::string::npos) {
      return make_error(ErrorKind::invalid, source + ":1:1: \"clusters\" is required");
    }
    return nlohmann::json{{"added", {"gamma"}}, {"message", "joined: gamma (active)"}};
  }
  Result<nlohmann::json> check_cluster(const std::string& cluster) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (cluster != "alpha")
      return make_error(ErrorKind::not_found, "no cluster \"" + cluster + "\"");
    ++checks;
    return nlohmann::json{{"cluster", cluster},
                          {"ok", false},
                          {"reason", "cluster alpha misconfigured: key-file: cannot read /k"},
                          {"checks", nlohmann::json::array({{{"name", "key-file"},
                                                             {"ok", false},
                                                             {"skipped", false},
                                                             {"why", "cannot read /k"}}})}};
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
  // Tickets, kept in order: ids 1, 2, ...; alpha is the only cluster with nodes a1, a2.
  std::vector<nlohmann::json> tickets;
  Result<nlohmann::json> open_ticket(const TicketRequest& r) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    if (r.cluster != "alpha") {
      return make_error(ErrorKind::not_found, "no cluster \"" + r.cluster + "\"");
    }
    if (r.summary.empty()) {
      return make_error(ErrorKind::invalid, "the summary is empty; say what the ticket is about");
    }
    nlohmann::json t = {
        {"id", static_cast<std::int64_t>(tickets.size() + 1)},
        {"cluster", r.cluster},
        {"summary", r.summary},
        {"nodes", r.nodes},
        {"incident", r.incident},
        {"state", "open"},
        {"opened_ms", 1700000000000},
        {"first_response_ms", nullptr},
        {"resolved_ms", nullptr},
        {"resolution", ""},
        {"history", {{{"at_ms", 1700000000000}, {"kind", "opened"}, {"text", r.summary}}}}};
    tickets.push_back(t);
    return t;
  }
  Result<nlohmann::json> list_tickets(const std::string& cluster, const std::string& state,
                                      int limit) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    last_ticket_query = cluster + "|" + state + "|" + std::to_string(limit);
    nlohmann::json out = nlohmann::json::array();
    for (auto it = tickets.rbegin(); it != tickets.rend(); ++it) {
      if (!state.empty() && (*it)["state"] != state) continue;
      nlohmann::json row = *it;
      row.erase("history");
      out.push_back(row);
    }
    return nlohmann::json{{"tickets", out}};
  }
  Result<nlohmann::json> get_ticket(std::int64_t id) override {
    std::lock_guard lock(mu_);
    return ticket_at(id);
  }
  Result<nlohmann::json> note_ticket(std::int64_t id, const std::string& text,
                                     bool from_provider) override {
    std::lock_guard lock(mu_);
    auto t = ticket_at(id);
    if (!t) return t;
    nlohmann::json& row = tickets[static_cast<std::size_t>(id - 1)];
    if (from_provider && row["first_response_ms"].is_null()) {
      row["first_response_ms"] = 1700005400000;  // 1.5 h after opening
    }
    row["history"].push_back(
        {{"at_ms", 1700005400000}, {"kind", from_provider ? "provider" : "note"}, {"text", text}});
    return row;
  }
  Result<nlohmann::json> close_ticket(std::int64_t id, const std::string& resolution) override {
    std::lock_guard lock(mu_);
    auto t = ticket_at(id);
    if (!t) return t;
    nlohmann::json& row = tickets[static_cast<std::size_t>(id - 1)];
    if (row["state"] == "closed") {
      return make_error(ErrorKind::conflict,
                        "ticket " + std::to_string(id) + " (alpha) is already closed");
    }
    row["state"] = "closed";
    row["resolved_ms"] = 1700093600000;  // 26 h after opening
    row["resolution"] = resolution;
    row["history"].push_back({{"at_ms", 1700093600000}, {"kind", "closed"}, {"text", resolution}});
    return row;
  }
  std::string last_ticket_query;
  CostQuery last_cost_query;
  Result<nlohmann::json> cost_report(const CostQuery& query) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    last_cost_query = query;
    // Team vision's 4 GPUs on alpha at 2.00 USD (tests/unit/web/scheduler_backend_cost_test.cpp).
    const nlohmann::json split = {{"gpu_hours",
                                   {{"total", 7.7666667},
                                    {"useful", 6.8},
                                    {"lost", 0.9666667},
                                    {"redone", 0.5333333},
                                    {"restart", 0.3},
                                    {"queued", 0.1333333},
                                    {"failed", 0.0}}},
                                  {"money",
                                   {{"total", 15.5333333},
                                    {"useful", 13.6},
                                    {"lost", 1.9333333},
                                    {"redone", 1.0666667},
                                    {"restart", 0.6},
                                    {"queued", 0.2666667},
                                    {"failed", 0.0}}}};
    nlohmann::json row = split;
    row["key"] = "vision";
    row["committed"] = nullptr;
    row["idle"] = nullptr;
    return nlohmann::json{{"by", query.by},
                          {"from_ms", 1796083200000},
                          {"now_ms", 1796097000000},
                          {"currency", "USD"},
                          {"rows", nlohmann::json::array({row})},
                          {"total", split}};
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
                            {"detection_median_s", 15},
                            {"detection_p95_s", 21.5},
                            {"recovery_median_s", 80},
                            {"recovery_p95_s", 120},
                            {"backoff_median_s", 0},
                            {"placing_median_s", 0.2},
                            {"site_median_s", 12},
                            {"startup_median_s", 45},
                            {"median_mfu", 0.412},
                            {"checkpoint_save_p95_s", 12.5},
                            {"io_stalls", 3},
                            {"nodes", 2},
                            {"quarantined_nodes", 1},
                            {"quarantined_share", 0.5},
                            {"open_tickets", 1},
                            {"tickets", 2},
                            {"ticket_response_median_h", 1.5},
                            {"ticket_resolution_median_h", 26},
                            {"delivery_delay_days", 3.5},
                            {"awaiting_delivery", false}};
    };
    nlohmann::json beta = card("beta-long-name", "cluster", {"beta-long-name"});
    for (const char* k :
         {"interruptions_per_1k_gpu_h", "node_mtbf_h", "detection_median_s", "detection_p95_s",
          "recovery_median_s", "recovery_p95_s", "backoff_median_s", "placing_median_s",
          "site_median_s", "startup_median_s", "median_mfu", "checkpoint_save_p95_s",
          "ticket_response_median_h", "ticket_resolution_median_h", "delivery_delay_days"}) {
      beta[k] = nullptr;
    }
    beta["interruptions"] = 0;
    beta["open_tickets"] = 0;
    beta["tickets"] = 0;
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
  // Records the points asked for; two attempts of two points each and a checkpoint.
  Result<JsonText> job_series(std::int64_t id, int max_points) override {
    using nlohmann::json;
    std::lock_guard lock(mu_);
    if (auto e = check(id)) return *e;
    series_points_asked = max_points;
    auto point = [](std::int64_t step, double loss) {
      json p = json::object();
      for (const char* key : {"step", "first_step", "last_step"}) p[key] = step;
      p["at_ms"] = 1700000000000 + step * 1000;
      for (const char* key : {"loss", "loss_min", "loss_max"}) p[key] = loss;
      p["tokens_per_s"] = 39010.0;
      p["step_time_s"] = 0.21;
      p["mfu"] = 0.38;
      return p;
    };
    auto attempt = [&](int no, std::int64_t from, json ended) {
      json a = json::object();
      a["attempt"] = no;
      a["cluster"] = "alpha";
      a["started_ms"] = 1700000000000 + from * 1000;
      a["ended_ms"] = std::move(ended);
      a["resumed_from_step"] = no == 1 ? json(nullptr) : json(from);
      a["mfu_flag"] = "";
      a["points"] = json::array({point(from + 1, 2.9), point(from + 2, 2.7)});
      return a;
    };
    json checkpoint = {{"step", 2}, {"attempt", 1}, {"at_ms", 1700000002000}};
    return JsonText{
        json{{"job_id", id},
             {"max_points", max_points},
             {"attempts", json::array({attempt(1, 0, 1700000005000), attempt(2, 2, nullptr)})},
             {"checkpoints", json::array({checkpoint})}}
            .dump()};
  }
  int series_points_asked = 0;

 private:
  static nlohmann::json node(const std::string& cluster, const std::string& name,
                             const std::string& state, int quarantines, nlohmann::json at,
                             const std::string& why) {
    return {
        {"cluster", cluster},
        {"name", name},
        {"gpus", 8},
        {"healthy", name != "a2"},
        {"reason", name == "a2" ? "drain: Xid 79" : ""},
        {"state", state},
        {"quarantines", quarantines},
        {"quarantined_at_ms", std::move(at)},
        {"state_reason", why},
        {"seen_ms", 1700000000000},
        {"failures", state == "active" ? 1 : 0},
        {"failures_to_quarantine", 2},
        {"window_h", 168},
        {"next_failure", state == "active" ? "the next failure quarantines it" : "out of service"},
        {"work_failures", state == "retired" ? 3 : 0},
        {"work_gpu_hours", state == "retired" ? 212.0 : 0.0},
        {"rate_per_gpu_h", state == "retired" ? 3 / 212.0 : 0.0},
        {"cluster_rate_per_gpu_h", 0.00156},
        {"rate_ratio", state == "retired" ? 9.07 : 0.0},
        {"rate_p_value", state == "retired" ? 0.0009 : 1.0},
        {"lemon", state == "retired"},
        {"count_rule", true},
        {"rate_evidence", state == "retired"
                              ? "3 failures in 212 GPU-hours: 9.1x its cluster's rate (0.0016/GPU-h)"
                              : "0 failures in 0 GPU-hours: its cluster's rate is 0.0016/GPU-h"}};
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
};

}  // namespace orch::testing
