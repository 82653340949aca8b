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
                            TransferState state,
                            TransferPurpose purpose = TransferPurpose::replication,
                            std::optional<JobId> job = std::nullopt) {
    TransferRow t;
    t.checkpoint_id = checkpoint;
    t.dataset = dataset;
    t.purpose = purpose;
    t.job_id = job;
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
    if (!transfer_active(state)) t.ended_ms = kStart + 3000;
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
                             {"what", "step 40 of job " + std::to_string(job)},
                             {"purpose", "replication"},
                             {"job", job},
                             {"step", 40},
                             {"group", "replication/" + std::to_string(job)},
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
                             {"average_mb_s", nullptr},
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
  EXPECT_EQ(all[0]["rate_mb_s"], 0.002) << "done: 2000 bytes in the second from start to end";
  EXPECT_EQ(all[0]["average_mb_s"], 0.002);
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

TEST_F(SchedulerBackendDataTest, TransfersAreGroupedByPurposeAndJobTheNewestGroupFirst) {
  const JobId a = add_job();
  const JobId b = add_job();
  const std::int64_t step40 = add_checkpoint(a, 40, kStart);
  const std::int64_t step80 = add_checkpoint(a, 80, kStart);
  ASSERT_TRUE(store_->insert_dataset({"imagenet", std::nullopt, 0, kStart}).value());
  const auto first = add_transfer(step40, "", TransferState::running);
  const auto staged =
      add_transfer(std::nullopt, "imagenet", TransferState::queued, TransferPurpose::staging, b);
  const auto second = add_transfer(step80, "", TransferState::failed);
  const auto asked = add_transfer(step80, "", TransferState::running, TransferPurpose::manual, a);

  json page = backend_->list_transfers(TransferFilter{false, 100}).value();
  ASSERT_EQ(page["transfers"].size(), 4u);
  EXPECT_EQ(page["transfers"][1]["what"], "step 80 of job " + std::to_string(a));
  EXPECT_EQ(page["transfers"][2]["what"], "dataset imagenet");
  EXPECT_EQ(page["transfers"][2]["job"], b);
  const json& groups = page["groups"];
  ASSERT_EQ(groups.size(), 3u) << groups;
  EXPECT_EQ(groups[0]["key"], "manual/" + std::to_string(a));
  EXPECT_EQ(groups[0]["label"], "manual copies of job " + std::to_string(a));
  EXPECT_EQ(groups[0]["transfers"], json({asked}));
  EXPECT_EQ(groups[1], json({{"key", "replication/" + std::to_string(a)},
                             {"purpose", "replication"},
                             {"job", a},
                             {"label", "checkpoint replication of job " + std::to_string(a)},
                             {"transfers", {second, first}},
                             {"states", {{"failed", 1}, {"running", 1}}},
                             {"bytes_total", 4000},
                             {"bytes_done", 1800},
                             {"rate_mb_s", 2.5}}))
      << "the rate of those running now";
  EXPECT_EQ(groups[2]["key"], "staging/" + std::to_string(b));
  EXPECT_EQ(groups[2]["label"], "staging for job " + std::to_string(b));
  EXPECT_EQ(groups[2]["transfers"], json({staged}));
  EXPECT_TRUE(groups[2]["rate_mb_s"].is_null()) << "none running";
}

TEST_F(SchedulerBackendDataTest, TheDefaultListKeepsActiveAndFailedAndPagesFollowTheCursor) {
  const JobId job = add_job();
  const std::int64_t ckpt = add_checkpoint(job, 40, kStart);
  std::vector<std::int64_t> shown;
  for (int i = 0; i < 3; ++i) {
    shown.push_back(add_transfer(ckpt, "", TransferState::failed));
    add_transfer(ckpt, "", TransferState::done);
    add_transfer(ckpt, "", TransferState::cancelled);
    shown.push_back(add_transfer(ckpt, "", TransferState::queued));
  }
  std::vector<std::int64_t> seen;
  TransferFilter filter{false, 4};
  int pages = 0;
  for (;;) {
    json page = backend_->list_transfers(filter).value();
    ++pages;
    for (const auto& t : page["transfers"]) seen.insert(seen.begin(), t["id"].get<std::int64_t>());
    if (page["next"].is_null()) break;
    filter.cursor = std::stoll(page["next"].get<std::string>());
  }
  EXPECT_EQ(pages, 2) << "6 shown, 4 a page";
  EXPECT_EQ(seen, shown) << "every active and failed one once, none done or cancelled";
  json all = backend_->list_transfers(TransferFilter{true, 12}).value();
  EXPECT_EQ(all["transfers"].size(), 12u);
  EXPECT_TRUE(all["next"].is_null()) << "exactly the last page";
}

TEST_F(SchedulerBackendDataTest, AFinishedTransferKeepsItsAverageRate) {
  const JobId job = add_job();
  const std::int64_t ckpt = add_checkpoint(job, 40, kStart);
  TransferRow done = store_->transfer(add_transfer(ckpt, "", TransferState::done)).value().value();
  done.copy_seconds = 4;
  done.copied_bytes = 10'000'000;  // the last try's copy: 2.5 MB/s
  ASSERT_TRUE(store_->update_transfer(done).ok());
  const auto failed = add_transfer(ckpt, "", TransferState::failed);

  json one = backend_->get_transfer(done.id).value();
  EXPECT_EQ(one["rate_mb_s"], 2.5) << one;
  EXPECT_EQ(one["average_mb_s"], 2.5);
  json broken = backend_->get_transfer(failed).value();
  EXPECT_TRUE(broken["rate_mb_s"].is_null()) << "not copied: no rate to show as its speed";
  EXPECT_EQ(broken["average_mb_s"], 0.0009) << "900 bytes from its start to its end (1 s)";
}

TEST_F(SchedulerBackendDataTest, ThroughputIsTheBytesCopiedInEachMinuteOfTheWindow) {
  const JobId job = add_job();
  const std::int64_t ckpt = add_checkpoint(job, 40, kStart);
  // Each at kStart + 3 s: 900 bytes moved (running), then 2000 (done).
  TransferRow t = store_->transfer(add_transfer(ckpt, "", TransferState::running)).value().value();
  add_transfer(ckpt, "", TransferState::done);
  t.bytes_done = 1900;
  t.updated_ms = kStart + 60'000;
  ASSERT_TRUE(store_->update_transfer(t).ok());
  clock_.set_ms(kStart + 120'000);

  auto r = backend_->transfer_throughput(4);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const json& answer = *r;
  EXPECT_EQ(answer["bucket_s"], 60);
  EXPECT_EQ(answer["bytes"], 3900);
  const Millis minute = kStart / 60'000 * 60'000;
  ASSERT_EQ(answer["points"].size(), 4u) << answer;
  EXPECT_EQ(answer["points"][0],
            json({{"at_ms", minute - 60'000}, {"bytes", 0}, {"bytes_per_s", 0.0}}))
      << "quiet minutes at 0";
  EXPECT_EQ(answer["points"][1],
            json({{"at_ms", minute}, {"bytes", 2900}, {"bytes_per_s", 48.33}}));
  EXPECT_EQ(answer["points"][2]["bytes"], 1000);
  EXPECT_EQ(answer["points"][3]["at_ms"], minute + 120'000) << "up to the minute now";
}

}  // namespace
}  // namespace orch
