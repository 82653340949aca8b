#pragma once
// A scripted DataApi for the web and CLI tests: job 1's checkpoints and their copies, datasets,
// transfers and audits, on clusters alpha and beta-long-name.

#include <algorithm>
#include <cstdint>
#include <string>

#include "tests/unit/web/fake_api_shared.h"
#include "web/data_api.h"

namespace orch::testing {

class FakeDataApi : public virtual DataApi, public virtual FakeApiShared {
 public:
  // Job 1 has two checkpoints, job 2 none; datasets imagenet and tiny. Transfer 7 (a
  // checkpoint, running at 45%) and 8 (a dataset, queued) are active, 6 is done.
  // Once active_rounds >= 0, each list_transfers call uses one round up and, at 0, 7 and 8 are
  // done (for `data transfers --watch`).
  int active_rounds = -1;
  int transfer_calls = 0;
  TransferFilter last_transfer_filter;
  int last_throughput_minutes = 0;
  std::string last_dataset, last_dataset_cluster, last_dataset_path, last_audit_cluster;
  ReplicateRequest last_replicate;
  int audits = 0;

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
    // Newest first, as the backend lists them.
    all.push_back(active ? transfer(8, "queued", 0) : transfer(8, "done", 1500000000));
    all.push_back(active ? transfer(7, "running", 675000000) : transfer(7, "done", 1500000000));
    all.push_back(transfer(6, "done", 1500000000));
    nlohmann::json out = nlohmann::json::array();
    nlohmann::json next = nullptr;
    for (const auto& t : all) {
      if (!filter.all && (t["state"] == "done" || t["state"] == "cancelled")) continue;
      if (filter.cursor > 0 && t["id"].get<std::int64_t>() >= filter.cursor) continue;
      if (static_cast<int>(out.size()) < filter.limit) {
        out.push_back(t);
      } else if (next.is_null()) {
        next = std::to_string(out.back()["id"].get<std::int64_t>());
      }
    }
    return nlohmann::json{{"groups", groups_of(out)}, {"transfers", out}, {"next", next}};
  }
  Result<nlohmann::json> transfer_throughput(int minutes) override {
    std::lock_guard lock(mu_);
    if (auto e = failure()) return *e;
    last_throughput_minutes = minutes;
    // Two minutes: 3 GB in the older, none in the newer.
    return nlohmann::json{{"bucket_s", 60},
                          {"minutes", minutes},
                          {"bytes", 3000000000},
                          {"points",
                           {{{"at_ms", 1700000040000}, {"bytes", 3000000000}, {"bytes_per_s", 5e7}},
                            {{"at_ms", 1700000100000}, {"bytes", 0}, {"bytes_per_s", 0.0}}}}};
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
  // The groups of a page as the backend makes them: by "group", in order of first appearance.
  static nlohmann::json groups_of(const nlohmann::json& page) {
    nlohmann::json groups = nlohmann::json::array();
    for (const auto& t : page) {
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const nlohmann::json& g) { return g["key"] == t["group"]; });
      if (it == groups.end()) {
        const bool staging = t["purpose"] == "staging";
        groups.push_back(
            {{"key", t["group"]},
             {"purpose", t["purpose"]},
             {"job", t["job"]},
             {"label", (staging ? "staging for job " : "checkpoint replication of job ") +
                           std::to_string(t["job"].get<int>())},
             {"transfers", nlohmann::json::array()},
             {"states", nlohmann::json::object()},
             {"bytes_total", 0},
             {"bytes_done", 0},
             {"rate_mb_s", nullptr}});
        it = groups.end() - 1;
      }
      auto& g = *it;
      g["transfers"].push_back(t["id"]);
      const std::string state = t["state"];
      g["states"][state] = g["states"].value(state, 0) + 1;
      g["bytes_total"] =
          g["bytes_total"].get<std::int64_t>() + t["bytes_total"].get<std::int64_t>();
      g["bytes_done"] = g["bytes_done"].get<std::int64_t>() + t["bytes_done"].get<std::int64_t>();
      if (state == "running") g["rate_mb_s"] = t["rate_mb_s"];
    }
    return groups;
  }
  // Transfer 7 copies step 1000 of job 1 (1.5 GB) at 50 MB/s capped at 25 of 100 MB/s; 8
  // copies dataset imagenet to stage job 2; 6 copied step 500 of job 1 at 30 MB/s on average.
  static nlohmann::json transfer(int id, const std::string& state, std::int64_t done) {
    const bool running = state == "running";
    nlohmann::json rate = running ? nlohmann::json(50.0) : nullptr;
    if (state == "done") rate = 30.0;
    const std::int64_t total = id == 8 ? 0 : 1500000000;
    nlohmann::json percent = nullptr;
    if (state == "done") percent = 100.0;
    if (total > 0 && state != "done") percent = 100.0 * static_cast<double>(done) / total;
    return {
        {"id", id},
        {"what", id == 8   ? "dataset imagenet"
                 : id == 7 ? "step 1000 of job 1"
                           : "step 500 of job 1"},
        {"purpose", id == 8 ? "staging" : "replication"},
        {"job", id == 8 ? 2 : 1},
        {"step", id == 8 ? nlohmann::json(nullptr) : nlohmann::json(id == 7 ? 1000 : 500)},
        {"group", id == 8 ? "staging/2" : "replication/1"},
        {"checkpoint", id == 8 ? nlohmann::json(nullptr) : nlohmann::json(id == 7 ? 12 : 11)},
        {"dataset", id == 8 ? nlohmann::json("imagenet") : nlohmann::json(nullptr)},
        {"from", {{"cluster", "alpha"}, {"path", "/ckpt/1000"}}},
        {"to", {{"cluster", "beta-long-name"}, {"path", "/mnt/ckpt/1000"}}},
        {"state", state},
        {"why", id == 8 ? "staging for job 2" : "replication"},
        {"bytes_total", total},
        {"bytes_done", done},
        {"percent", percent},
        {"rate_mb_s", rate},
        {"average_mb_s", state == "done" ? rate : nlohmann::json(nullptr)},
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
};

}  // namespace orch::testing
