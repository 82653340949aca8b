// The real backend's checkpoint and data methods over a real store: a job's checkpoints with
// their copies, datasets, transfers (rows written through the store API), and the data commands
// through the brain loop; the shapes docs/rest-api.md promises.
#include <gtest/gtest.h>

#include <filesystem>

#include "scheduler/brain/brain.h"
#include "scheduler/runtime/brain_loop.h"
#include "tests/harness/builders.h"
#include "tests/unit/web/backend_fixture.h"
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using nlohmann::json;
using testing::make_cluster;
using testing::make_job;

constexpr Millis kStart = 1'700'000'000'000;

class SchedulerBackendDataTest : public BackendFixture {
 protected:
  void SetUp() override {
    clock_.set_ms(kStart);
    open({make_cluster("alpha"), make_cluster("beta")});
  }

  // A job with one attempt on alpha; its id.
  JobId add_job() {
    JobRow j;
    j.name = "toy";
    j.spec = make_job();
    j.state = JobState::running;
    j.created_ms = kStart;
    j.updated_ms = kStart;
    const JobId id = store_->insert_job(j).value();
    AttemptRow a;
    a.job_id = id;
    a.no = 1;
    a.cluster = "alpha";
    a.token = "t" + std::to_string(id);
    a.gpus = 1;
    a.started_ms = kStart;
    attempt_ = store_->insert_attempt(a).value();
    return id;
  }
  // A checkpoint of the job's attempt; its id.
  std::int64_t add_checkpoint(JobId job, std::int64_t step, Millis at) {
    EXPECT_TRUE(store_
                    ->insert_checkpoint(
                        {0, job, attempt_, step, "/ckpt/toy/step-" + std::to_string(step), 2.5, at})
                    .value());
    for (const auto& c : store_->checkpoints_of(job).value()) {
      if (c.step == step) return c.id;
    }
    ADD_FAILURE() << "checkpoint at step " << step << " not stored";
    return 0;
  }
  std::int64_t add_replica(std::optional<std::int64_t> checkpoint, const std::string& dataset,
                           const std::string& cluster, ReplicaState state,
                           const std::string& node = "") {
    ReplicaRow r;
    r.checkpoint_id = checkpoint;
    r.dataset = dataset;
    r.cluster = cluster;
    r.node = node;
    r.path = "/" + cluster + (node.empty() ? "" : "/" + node) + "/copy";
    r.state = state;
    r.detail = state == ReplicaState::copying ? "transfer running" : "";
    r.updated_ms = kStart + 5000;
    if (state == ReplicaState::verified) r.verified_ms = kStart + 4000;
    return store_->insert_replica(r).value();
  }
  std::int64_t add_transfer(std::optional<std::int64_t> checkpoint, const std::string& dataset,
                            TransferState state) {
    TransferRow t;
    t.checkpoint_id = checkpoint;
    t.dataset = dataset;
    t.src_cluster = "alpha";
    t.src_path = "/alpha/copy";
    t.dst_cluster = "beta";
    t.dst_path = "/beta/copy";
    t.why = "replication";
    t.created_ms = kStart + 1000;
    t.id = store_->insert_transfer(t).value();
    t.state = state;
    t.bytes_total = 2000;
    t.bytes_done = state == TransferState::done ? 2000 : 900;
    t.rate_bps = 2.5e6;
    t.cap_bps = 5e6;
    t.base_cap_bps = 1e7;
    t.tries = 2;
    t.error = state == TransferState::done ? "" : "rsync exit 30: timeout";
    t.route = "beta pulls from alpha";
    t.started_ms = kStart + 2000;
    if (state == TransferState::done) t.ended_ms = kStart + 3000;
    t.updated_ms = kStart + 3000;
    EXPECT_TRUE(store_->update_transfer(t).ok());
    return t.id;
  }
  AttemptId attempt_ = 0;
};

TEST_F(SchedulerBackendDataTest, JobCheckpointsNewestFirstWithTheirCopies) {
  const JobId job = add_job();
  const std::int64_t older = add_checkpoint(job, 20, kStart + 1000);
  const std::int64_t newer = add_checkpoint(job, 40, kStart + 2000);
  const json manifest = {{"directory", true},
                         {"files",
                          {{{"path", "model.bin"}, {"size", 2048}, {"sha256", "ab"}},
                           {{"path", "opt.bin"}, {"size", 1024}, {"sha256", "cd"}}}}};
  ASSERT_TRUE(store_->set_checkpoint_manifest(newer, manifest, 3072).ok());
  const std::int64_t at_alpha = add_replica(newer, "", "alpha", ReplicaState::verified);
  const std::int64_t at_beta = add_replica(newer, "", "beta", ReplicaState::copying);
  add_replica(older, "", "alpha", ReplicaState::present);
  add_replica(older, "", "alpha", ReplicaState::verified, "alpha-n0");  // tiered: on the node

  auto r = backend_->job_checkpoints(job);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["job"], job);
  const json& list = (*r)["checkpoints"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0], json({{"id", newer},
                           {"step", 40},
                           {"path", "/ckpt/toy/step-40"},
                           {"cluster", "alpha"},
                           {"bytes", 3072},
                           {"save_time_s", 2.5},
                           {"at_ms", kStart + 2000},
                           {"verified", true},
                           {"files", 2},
                           {"replicas",
                            {{{"id", at_alpha},
                              {"cluster", "alpha"},
                              {"tier", "site"},
                              {"node", nullptr},
                              {"path", "/alpha/copy"},
                              {"state", "verified"},
                              {"detail", ""},
                              {"updated_ms", kStart + 5000},
                              {"verified_ms", kStart + 4000},
                              {"audited_ms", nullptr}},
                             {{"id", at_beta},
                              {"cluster", "beta"},
                              {"tier", "site"},
                              {"node", nullptr},
                              {"path", "/beta/copy"},
                              {"state", "copying"},
                              {"detail", "transfer running"},
                              {"updated_ms", kStart + 5000},
                              {"verified_ms", nullptr},
                              {"audited_ms", nullptr}}}}}));
  EXPECT_EQ(list[1]["step"], 20);
  EXPECT_TRUE(list[1]["bytes"].is_null());
  EXPECT_TRUE(list[1]["files"].is_null());
  ASSERT_EQ(list[1]["replicas"].size(), 2u);
  EXPECT_EQ(list[1]["replicas"][0]["tier"], "site");
  EXPECT_EQ(list[1]["replicas"][1]["tier"], "node");
  EXPECT_EQ(list[1]["replicas"][1]["node"], "alpha-n0");

  const JobId bare = add_job();
  EXPECT_EQ(backend_->job_checkpoints(bare).value()["checkpoints"], json::array());
  auto unknown = backend_->job_checkpoints(999);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
  EXPECT_EQ(unknown.error().message, "no job with id 999");
}

TEST_F(SchedulerBackendDataTest, DatasetsWithTheirCopies) {
  EXPECT_EQ(backend_->list_datasets().value(), json({{"datasets", json::array()}}));
  const json manifest = {{"directory", true},
                         {"files", {{{"path", "a"}, {"size", 5}, {"sha256", ""}}}}};
  ASSERT_TRUE(store_->insert_dataset({"imagenet", manifest, 5, kStart}).value());
  ASSERT_TRUE(store_->insert_dataset({"c4", std::nullopt, 0, kStart + 1}).value());
  const std::int64_t copy = add_replica(std::nullopt, "imagenet", "alpha", ReplicaState::verified);
  add_replica(std::nullopt, "imagenet", "beta", ReplicaState::missing);

  json list = backend_->list_datasets().value()["datasets"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0], json({{"name", "c4"},
                           {"bytes", nullptr},
                           {"files", nullptr},
                           {"created_ms", kStart + 1},
                           {"replicas", json::array()}}));
  EXPECT_EQ(list[1]["name"], "imagenet");
  EXPECT_EQ(list[1]["bytes"], 5);
  EXPECT_EQ(list[1]["files"], 1);
  ASSERT_EQ(list[1]["replicas"].size(), 2u);
  EXPECT_EQ(list[1]["replicas"][0]["id"], copy);
  EXPECT_EQ(list[1]["replicas"][0]["state"], "verified");
  EXPECT_EQ(list[1]["replicas"][1]["state"], "missing");
}

TEST_F(SchedulerBackendDataTest, TransfersActiveByDefaultNewestFirst) {
  const JobId job = add_job();
  const std::int64_t ckpt = add_checkpoint(job, 40, kStart);
  ASSERT_TRUE(store_->insert_dataset({"imagenet", std::nullopt, 0, kStart}).value());
  const std::int64_t running = add_transfer(ckpt, "", TransferState::running);
  const std::int64_t done = add_transfer(std::nullopt, "imagenet", TransferState::done);

  json active = backend_->list_transfers(TransferFilter{false, 100}).value()["transfers"];
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0], json({{"id", running},
                             {"what", "checkpoint " + std::to_string(ckpt) + " of job " +
                                          std::to_string(job) + " (step 40)"},
                             {"checkpoint", ckpt},
                             {"dataset", nullptr},
                             {"from", {{"cluster", "alpha"}, {"path", "/alpha/copy"}}},
                             {"to", {{"cluster", "beta"}, {"path", "/beta/copy"}}},
                             {"state", "running"},
                             {"why", "replication"},
                             {"bytes_total", 2000},
                             {"bytes_done", 900},
                             {"percent", 45.0},
                             {"rate_mb_s", 2.5},
                             {"cap_mb_s", 5.0},
                             {"base_cap_mb_s", 10.0},
                             {"tries", 2},
                             {"error", "rsync exit 30: timeout"},
                             {"route", "beta pulls from alpha"},
                             {"created_ms", kStart + 1000},
                             {"started_ms", kStart + 2000},
                             {"ended_ms", nullptr},
                             {"next_try_ms", nullptr}}));

  json all = backend_->list_transfers(TransferFilter{true, 100}).value()["transfers"];
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["id"], done) << "newest first";
  EXPECT_EQ(all[0]["what"], "dataset imagenet");
  EXPECT_EQ(all[0]["dataset"], "imagenet");
  EXPECT_TRUE(all[0]["checkpoint"].is_null());
  EXPECT_EQ(all[0]["percent"], 100.0);
  EXPECT_TRUE(all[0]["rate_mb_s"].is_null()) << "a rate only while running";
  EXPECT_EQ(all[0]["ended_ms"], kStart + 3000);
  EXPECT_EQ(backend_->list_transfers(TransferFilter{true, 1}).value()["transfers"].size(), 1u);

  auto one = backend_->get_transfer(running);
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(*one, active[0]);
  auto unknown = backend_->get_transfer(999);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
  EXPECT_EQ(unknown.error().message, "no transfer with id 999");
}

TEST_F(SchedulerBackendDataTest, UncappedAndUnsizedTransfers) {
  ASSERT_TRUE(store_->insert_dataset({"imagenet", std::nullopt, 0, kStart}).value());
  TransferRow t;
  t.dataset = "imagenet";
  t.src_cluster = "alpha";
  t.dst_cluster = "beta";
  t.created_ms = kStart;
  const std::int64_t id = store_->insert_transfer(t).value();
  json one = backend_->get_transfer(id).value();
  EXPECT_EQ(one["state"], "queued");
  EXPECT_TRUE(one["percent"].is_null()) << "size not known yet";
  EXPECT_TRUE(one["cap_mb_s"].is_null()) << "uncapped";
  EXPECT_TRUE(one["base_cap_mb_s"].is_null());
  EXPECT_TRUE(one["started_ms"].is_null());

  t = store_->transfer(id).value().value();
  t.state = TransferState::verifying;
  t.bytes_total = 100;
  ASSERT_TRUE(store_->update_transfer(t).ok());
  EXPECT_EQ(backend_->get_transfer(id).value()["percent"], 100.0)
      << "copied, being checked at the destination";
}

TEST_F(SchedulerBackendDataTest, CommandsCheckTheirClusterBeforeTheBrain) {
  // The loop is not started: a command that reached it would block.
  auto add = backend_->register_dataset("c4", "zeta", "/data/c4");
  ASSERT_FALSE(add.ok());
  EXPECT_EQ(add.error().kind, ErrorKind::invalid);
  EXPECT_EQ(add.error().message, "no cluster named \"zeta\"; configured: alpha, beta");
  auto copy = backend_->replicate_data(ReplicateRequest{"c4", 0, "zeta"});
  ASSERT_FALSE(copy.ok());
  EXPECT_EQ(copy.error().message, "no cluster named \"zeta\"; configured: alpha, beta");
  EXPECT_EQ(backend_->replicate_data(ReplicateRequest{"c4", 0, "beta"}).error().kind,
            ErrorKind::not_found);
  EXPECT_EQ(backend_->replicate_data(ReplicateRequest{"", 99, "beta"}).error().message,
            "no job with id 99");
  EXPECT_EQ(backend_->replicate_data(ReplicateRequest{"", 0, "beta"}).error().kind,
            ErrorKind::invalid);
  EXPECT_EQ(backend_->start_audit("zeta").error().kind, ErrorKind::invalid);
}

TEST_F(SchedulerBackendDataTest, CommandsGoThroughTheBrain) {
  const JobId job = add_job();
  const std::int64_t ckpt = add_checkpoint(job, 40, kStart);
  add_replica(ckpt, "", "alpha", ReplicaState::verified);
  const JobId unverified = add_job();
  add_replica(add_checkpoint(unverified, 10, kStart), "", "alpha", ReplicaState::present);
  loop_->start();

  auto added = backend_->register_dataset("c4", "alpha", "/data/c4");
  ASSERT_TRUE(added.ok()) << added.error().message;
  EXPECT_EQ((*added)["name"], "c4");
  EXPECT_NE((*added)["message"].get<std::string>().find("c4"), std::string::npos) << *added;
  json datasets = backend_->list_datasets().value()["datasets"];
  ASSERT_EQ(datasets.size(), 1u);
  ASSERT_EQ(datasets[0]["replicas"].size(), 1u);
  EXPECT_EQ(datasets[0]["replicas"][0]["cluster"], "alpha");
  EXPECT_EQ(datasets[0]["replicas"][0]["path"], "/data/c4");

  // Not listed yet, so nothing verified to copy from.
  auto early = backend_->replicate_data(ReplicateRequest{"c4", 0, "beta"});
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().kind, ErrorKind::conflict) << early.error().message;
  auto none = backend_->replicate_data(ReplicateRequest{"", unverified, "beta"});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, ErrorKind::conflict) << none.error().message;

  auto copy = backend_->replicate_data(ReplicateRequest{"", job, "beta"});
  ASSERT_TRUE(copy.ok()) << copy.error().message;
  ASSERT_TRUE((*copy)["transfer"].is_number_integer()) << *copy;
  const std::int64_t id = (*copy)["transfer"];
  EXPECT_NE((*copy)["message"].get<std::string>().find("beta"), std::string::npos) << *copy;
  json transfer = backend_->get_transfer(id).value();
  EXPECT_EQ(transfer["checkpoint"], ckpt);
  EXPECT_EQ(transfer["from"]["cluster"], "alpha");
  EXPECT_EQ(transfer["to"]["cluster"], "beta");
  EXPECT_EQ(backend_->list_transfers(TransferFilter{false, 100}).value()["transfers"].size(), 1u);
  // Asking again finds the copy under way.
  auto again = backend_->replicate_data(ReplicateRequest{"", job, "beta"});
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE((*again)["transfer"].is_null()) << *again;

  auto audit = backend_->start_audit("");
  ASSERT_TRUE(audit.ok()) << audit.error().message;
  EXPECT_TRUE((*audit)["message"].is_string());
  auto one = backend_->start_audit("alpha");
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_NE((*one)["message"].get<std::string>().find("alpha"), std::string::npos) << *one;
}

}  // namespace
}  // namespace orch
