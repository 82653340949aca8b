// The real backend over a store the brain wrote: the shapes docs/rest-api.md promises.
#include <gtest/gtest.h>

#include <filesystem>

#include "scheduler/brain/brain.h"
#include "scheduler/runtime/brain_loop.h"
#include "tests/harness/builders.h"
#include "tests/unit/web/backend_fixture.h"
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using testing::make_cluster;
using testing::make_job;

class SchedulerBackendTest : public BackendFixture {
 protected:
  void SetUp() override { open({make_cluster("alpha"), make_cluster("beta")}); }

  // GET /jobs's page as the client parses it.
  nlohmann::json page(const JobFilter& filter) {
    auto text = backend_->list_jobs(filter);
    EXPECT_TRUE(text.ok()) << text.error().message;
    return text.ok() ? nlohmann::json::parse(text->text) : nlohmann::json(nullptr);
  }
};

TEST_F(SchedulerBackendTest, JobsComePagedNewestFirstWithTheirAttemptsAndLatestCheckpoint) {
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    auto r = brain_->handle(SubmitJob{make_job().nodes(1).gpus(2).on({"alpha"})});
    ASSERT_TRUE(r.ok()) << r.error().message;
    ids.push_back(r->job_id);
  }
  const AttemptRow first = store_->attempts_of(ids[0]).value().at(0);
  ASSERT_TRUE(store_->insert_checkpoint({0, ids[0], first.id, 40, "/ckpt/40", 1.0, 5}).ok());
  ASSERT_TRUE(store_->insert_checkpoint({0, ids[0], first.id, 20, "/ckpt/20", 1.0, 6}).ok());

  JobFilter page;
  page.limit = 2;
  const nlohmann::json one = this->page(page);
  ASSERT_EQ(one["jobs"].size(), 2u);
  EXPECT_EQ(one["jobs"][0]["id"], ids[2]);
  EXPECT_EQ(one["jobs"][1]["id"], ids[1]);
  EXPECT_EQ(one["next"], std::to_string(ids[1]));
  page.cursor = ids[1];
  const nlohmann::json two = this->page(page);
  ASSERT_EQ(two["jobs"].size(), 1u);
  const nlohmann::json& oldest = two["jobs"][0];
  EXPECT_TRUE(two["next"].is_null());
  EXPECT_EQ(oldest["id"], ids[0]);
  EXPECT_EQ(oldest["attempts"], 1);
  EXPECT_EQ(oldest["cluster"], "alpha");
  EXPECT_EQ(oldest["gpus_per_node"], 2);
  EXPECT_EQ(oldest["last_checkpoint"]["step"], 40);
  EXPECT_EQ(oldest["last_checkpoint"]["path"], "/ckpt/40");
  EXPECT_FALSE(oldest.contains("spec"));

  JobFilter on_beta;
  on_beta.cluster = "beta";
  EXPECT_TRUE(this->page(on_beta).at("jobs").empty());

  // One job shows the row the page showed, plus the spec as submitted.
  auto text = backend_->get_job(ids[0]);
  ASSERT_TRUE(text.ok()) << text.error().message;
  const nlohmann::json job = nlohmann::json::parse(text->text);
  for (const char* key : {"id", "attempts", "cluster", "last_checkpoint", "nodes"}) {
    EXPECT_EQ(job[key], oldest[key]) << key;
  }
  EXPECT_EQ(job["spec"]["resources"]["gpus_per_node"], 2);
  EXPECT_EQ(job["spec"]["placement"]["allowed"], nlohmann::json({"alpha"}));
  EXPECT_TRUE(job.contains("checkpoint_advice"));
}

TEST_F(SchedulerBackendTest, APageShowsEveryLaterWriteToAJobWhoseRowItRenderedBefore) {
  auto submitted = brain_->handle(SubmitJob{make_job().nodes(1).gpus(2).on({"alpha"})});
  ASSERT_TRUE(submitted.ok());
  const std::int64_t id = submitted->job_id;
  const JobFilter all;
  EXPECT_EQ(page(all)["jobs"][0]["state"], "placed");

  OutboxRow launch = store_->pending_actions("alpha").value().at(0);
  handle(LaunchCompleted{launch.id, launch.token, LaunchResult{"4242", {"a1"}}, false});
  clock_.advance_ms(1000);
  ExitStatus ok;
  ok.exit_code = 0;
  handle(AttemptObserved{"alpha", launch.token, RunPhase::exited, ok, {}, {}, {}});
  const nlohmann::json done = page(all)["jobs"][0];
  EXPECT_EQ(done["state"], "succeeded");
  // Rendered twice at the same revision: the second comes from the cache, and is the same row.
  EXPECT_EQ(page(all)["jobs"][0], done);
  auto job = [&](SchedulerBackend& from) {
    auto text = from.get_job(id);
    EXPECT_TRUE(text.ok());
    return text.ok() ? nlohmann::json::parse(text->text) : nlohmann::json(nullptr);
  };
  const nlohmann::json shown = job(*backend_);
  EXPECT_EQ(job(*backend_), shown);

  // A checkpoint written after the row was cached moves the job's revision: the page shows it.
  const AttemptRow attempt = store_->attempts_of(id).value().at(0);
  ASSERT_TRUE(store_->insert_checkpoint({0, id, attempt.id, 70, "/ckpt/70", 1.0, 9}).ok());
  const nlohmann::json later = page(all)["jobs"][0];
  EXPECT_EQ(later["last_checkpoint"]["step"], 70);
  EXPECT_EQ(job(*backend_)["last_checkpoint"]["step"], 70);

  // And a backend with nothing cached renders the same row.
  SchedulerBackend fresh(std::move(Store::open((dir_ / "state.db").string()).value()), *loop_,
                         {make_cluster("alpha"), make_cluster("beta")}, {}, clock_);
  auto text = fresh.list_jobs(all);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(nlohmann::json::parse(text->text)["jobs"][0], later);
  EXPECT_EQ(job(fresh), job(*backend_));
}

// A hot spare's holder is ours: its GPUs show as held by spares, not by another tenant, with
// what it has cost idle so far.
// Issue 41: each attempt says what failed, and the job the newest failed attempt's words.
TEST_F(SchedulerBackendTest, TheJobAndEachAttemptCarryTheirErrorExcerpt) {
  auto r = brain_->handle(SubmitJob{make_job().nodes(1).gpus(2).on({"alpha"})});
  ASSERT_TRUE(r.ok()) << r.error().message;
  AttemptRow first = store_->attempts_of(r->job_id).value().at(0);
  first.error_excerpt = "torchrun: not found\ncommand not found on alpha-n0 (exit 127)";
  ASSERT_TRUE(store_->update_attempt(first).ok());
  AttemptRow second = first;
  second.no = 2;
  second.token = first.token + "-2";
  second.error_excerpt.clear();
  ASSERT_TRUE(store_->insert_attempt(second).ok());

  auto job = backend_->get_job(r->job_id);
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(nlohmann::json::parse(job->text)["error_excerpt"], first.error_excerpt);
  auto attempts = backend_->job_attempts(r->job_id);
  ASSERT_TRUE(attempts.ok()) << attempts.error().message;
  EXPECT_EQ((*attempts)["attempts"][0]["error_excerpt"], first.error_excerpt);
  EXPECT_EQ((*attempts)["attempts"][1]["error_excerpt"], "");
  EXPECT_EQ(page(JobFilter{})["jobs"][0]["error_excerpt"], first.error_excerpt);
}

TEST_F(SchedulerBackendTest, ClustersShowTheirHotSparesAndWhatTheyCost) {
  SpareRow spare;
  spare.cluster = "alpha";
  spare.node = "alpha-n1";
  spare.token = "orch-spare-alpha-x-1";
  spare.state = SpareState::ready;
  spare.gpus = 4;
  spare.created_ms = clock_.now_ms();
  spare.held_ms = clock_.now_ms();
  spare.ready_ms = clock_.now_ms();
  ASSERT_TRUE(store_->add_spare(spare).ok());
  handle(
      InventoryObserved{"alpha", {{{"alpha-n0", 4, true, "", 0}, {"alpha-n1", 4, true, "", 4}}}});
  clock_.advance_ms(30 * 60'000);
  auto body = backend_->list_clusters();
  ASSERT_TRUE(body.ok()) << body.error().message;
  const auto& alpha = (*body)["clusters"][0];
  EXPECT_EQ(alpha["gpus_spare"], 4);
  EXPECT_EQ(alpha["gpus_foreign"], 0) << "the holder's GPUs are ours";
  EXPECT_EQ(alpha["spares"]["ready"], 1);
  EXPECT_EQ(alpha["spares"]["nodes"][0]["node"], "alpha-n1");
  EXPECT_EQ(alpha["spares"]["nodes"][0]["state"], "ready");
  EXPECT_DOUBLE_EQ(alpha["spares"]["gpu_hours_idle"].get<double>(), 2.0);
}

TEST_F(SchedulerBackendTest, ClustersShowTheGpusOtherTenantsHoldBeyondOurOwn) {
  auto submitted = brain_->handle(SubmitJob{make_job().gpus(2).on({"alpha"})});
  ASSERT_TRUE(submitted.ok());
  OutboxRow launch = store_->pending_actions("alpha").value().at(0);
  handle(LaunchCompleted{launch.id, launch.token, LaunchResult{"4242", {"alpha-n0"}}, false});
  handle(AttemptObserved{"alpha", launch.token, RunPhase::running, std::nullopt, {}, {}, {}});
  // The site lists alpha-n0 with 3 busy (our 2, one of another tenant's), alpha-n1 down with 4.
  handle(InventoryObserved{"alpha",
                           {{{"alpha-n0", 4, true, "", 3}, {"alpha-n1", 4, false, "down", 4}}}});
  auto body = backend_->list_clusters();
  ASSERT_TRUE(body.ok()) << body.error().message;
  const auto& alpha = (*body)["clusters"][0];
  EXPECT_EQ(alpha["gpus_used"], 2);
  EXPECT_EQ(alpha["gpus_foreign"], 1) << "a down node's busy GPUs are out already";
  EXPECT_EQ(alpha["node_list"][0]["gpus_busy"], 3);
  EXPECT_EQ((*body)["clusters"][1]["gpus_foreign"], 0);
}

TEST_F(SchedulerBackendTest, ExplainListsEveryFilterThatRefusedAndEachPreemptionConsidered) {
  auto low = brain_->handle(SubmitJob{make_job().name("sweep-1").nodes(2).gpus(4).on({"alpha"})});
  ASSERT_TRUE(low.ok()) << low.error().message;
  auto hero = brain_->handle(
      SubmitJob{make_job().name("hero").nodes(2).gpus(4).on({"alpha"}).priority(1000)});
  ASSERT_TRUE(hero.ok()) << hero.error().message;
  auto body = backend_->explain_job(hero->job_id);
  ASSERT_TRUE(body.ok()) << body.error().message;
  const nlohmann::json& clusters = (*body)["clusters"];
  ASSERT_EQ(clusters.size(), 2u);
  for (const auto& c : clusters) {
    if (c["cluster"] == "alpha") {
      EXPECT_EQ(c["refused_by"], nlohmann::json::parse(R"([{"filter": "capacity",
          "reason": "only 0 of 8 GPUs free, job needs 8"}])"));
      ASSERT_EQ(c["preemptions"].size(), 1u);
      const auto& p = c["preemptions"][0];
      EXPECT_EQ(p["job_id"], low->job_id);
      EXPECT_EQ(p["job_name"], "sweep-1");
      EXPECT_EQ(p["team"], "");
      EXPECT_EQ(p["gpus"], 8);
      EXPECT_EQ(p["taken"], true);
      EXPECT_EQ(p["why"],
                "taken: priority 0 below the job's 1000; 0 step(s) at risk since its "
                "last checkpoint");
      EXPECT_EQ(c["preemptions_more"], 0);
    } else {
      EXPECT_EQ(c["refused_by"][0]["filter"], "allowed-clusters");
      EXPECT_EQ(c["refused_by"][0]["reason"], "not in the job's allowed clusters");
      EXPECT_EQ(c["preemptions"], nlohmann::json::array());
    }
  }
}

// Issue 45: explain names the objective that ranked the clusters and gives each scored one its
// expected goodput; in a fleet without prices the price and the goodput per cost are null.
TEST_F(SchedulerBackendTest, ExplainNamesTheObjectiveAndEachClustersGoodputAndPrice) {
  auto placed = brain_->handle(SubmitJob{make_job().nodes(1).gpus(4)});
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  auto body = backend_->explain_job(placed->job_id);
  ASSERT_TRUE(body.ok()) << body.error().message;
  EXPECT_EQ((*body)["objective"], "goodput");
  for (const auto& c : (*body)["clusters"]) {
    SCOPED_TRACE(c["cluster"].get<std::string>());
    EXPECT_EQ(c["goodput_flops"].is_number(), c["feasible"].get<bool>());
    EXPECT_TRUE(c["price_per_gpu_hour"].is_null());
    EXPECT_TRUE(c["goodput_per_cost"].is_null());
    EXPECT_EQ(c["price_assumed"], false);
  }
}

// In a priced fleet each scored cluster has its price and the useful FLOP a unit of money buys
// there; an unpriced one is judged at the dearest priced cluster's price, and says so.
TEST_F(SchedulerBackendTest, ExplainGivesEachClustersPriceAndGoodputPerUnitOfMoney) {
  TearDown();
  ClusterSpec alpha = make_cluster("alpha");
  alpha.price.configured = true;
  alpha.price.per_gpu_hour = 3.0;
  open({alpha, make_cluster("beta")});
  auto placed = brain_->handle(SubmitJob{make_job().nodes(1).gpus(4)});
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  auto body = backend_->explain_job(placed->job_id);
  ASSERT_TRUE(body.ok()) << body.error().message;
  EXPECT_EQ((*body)["objective"], "goodput");
  for (const auto& c : (*body)["clusters"]) {
    SCOPED_TRACE(c["cluster"].get<std::string>());
    EXPECT_EQ(c["price_per_gpu_hour"], 3.0);
    EXPECT_EQ(c["currency"], "USD");
    const double flops = c["goodput_flops"].get<double>();
    if (c["cluster"] == "alpha") {
      EXPECT_EQ(c["price_assumed"], false);
      EXPECT_DOUBLE_EQ(c["goodput_per_cost"].get<double>(), flops * 3600 / (4 * 3.0));
    } else {
      EXPECT_EQ(c["price_assumed"], true);
      EXPECT_TRUE(c["goodput_per_cost"].is_null());
    }
  }
}

TEST_F(SchedulerBackendTest, ClusterNodesListsNodesAndTheLedgerNewestFirst) {
  auto submitted = brain_->handle(SubmitJob{make_job().nodes(2).gpus(4).on({"alpha"})});
  ASSERT_TRUE(submitted.ok());
  const std::int64_t id = submitted->job_id;
  OutboxRow launch = store_->pending_actions("alpha").value().at(0);
  handle(LaunchCompleted{launch.id, launch.token, LaunchResult{"4242", {"a1", "a2"}}, false});
  handle(InventoryObserved{"alpha", {{{"a1", 4, true, ""}, {"a2", 4, false, "drain: Xid 79"}}}});
  clock_.advance_ms(1000);
  ExitStatus lost;
  lost.node_lost = true;
  lost.detail = "NODE_FAIL";
  handle(AttemptObserved{"alpha", launch.token, RunPhase::exited, lost, {}, {}, {}});

  auto body = backend_->cluster_nodes("alpha", 50);
  ASSERT_TRUE(body.ok()) << body.error().message;
  const auto& j = *body;
  EXPECT_EQ(j["cluster"], "alpha");
  ASSERT_EQ(j["nodes"].size(), 2u);
  EXPECT_EQ(j["nodes"][1]["name"], "a2");
  EXPECT_EQ(j["nodes"][1]["gpus"], 4);
  EXPECT_EQ(j["nodes"][1]["healthy"], false);
  EXPECT_EQ(j["nodes"][1]["reason"], "drain: Xid 79");
  EXPECT_EQ(j["nodes"][1]["updated_ms"], 1'700'000'000'000);
  ASSERT_EQ(j["events"].size(), 3u);
  EXPECT_EQ(j["events"][0]["kind"], "node-failure");
  EXPECT_EQ(j["events"][0]["node"], "a2");
  EXPECT_EQ(j["events"][0]["job_id"], id);
  EXPECT_EQ(j["events"][0]["attempt_no"], 1);
  EXPECT_EQ(j["events"][0]["at_ms"], 1'700'000'001'000);
  EXPECT_EQ(j["events"][2]["kind"], "node-unhealthy");
  EXPECT_TRUE(j["events"][2]["job_id"].is_null());
  EXPECT_TRUE(j["events"][2]["attempt_no"].is_null());

  EXPECT_EQ(backend_->cluster_nodes("alpha", 1)->at("events").size(), 1u);
  EXPECT_TRUE(backend_->cluster_nodes("beta", 50)->at("nodes").empty());
  auto unknown = backend_->cluster_nodes("zeta", 50);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
  EXPECT_EQ(unknown.error().message, "no cluster named \"zeta\"");

  // What `job show` prints per attempt comes from here.
  auto attempts = backend_->job_attempts(id);
  ASSERT_TRUE(attempts.ok());
  const auto& a = (*attempts)["attempts"][0];
  EXPECT_EQ(a["cluster"], "alpha");
  EXPECT_EQ(a["site_job_id"], "4242");
  EXPECT_EQ(a["nodes"], nlohmann::json({"a1", "a2"}));
  EXPECT_EQ(a["cause"], "node_lost");
  EXPECT_TRUE(a.contains("last_step"));
  EXPECT_TRUE(a.contains("mfu"));
}

}  // namespace
}  // namespace orch

namespace orch {
namespace {

// What is refused after parsing (by the brain, the rules of who may ask for what, the secret
// registry) says where in the document, as the parser's own errors do.
TEST_F(SchedulerBackendTest, ASubmissionRefusedAfterParsingSaysTheLineAndColumn) {
  auto registry = std::make_unique<SecretRegistry>(
      std::move(SecretStore::open(":memory:", clock_).value()), clock_);
  ASSERT_TRUE(registry->set("hf", "v", {"nlp"}, "ada").ok());
  backend_->set_secrets(registry.get());
  loop_->start();
  const std::string head = "name: a\ncommand: 'true'\n";
  const Submitter vic{"vic", false, {"vision"}};
  auto unknown =
      backend_->submit_job(head + "placement:\n  allowed: [alpha, gamma]\n", "job.yaml", vic);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message.rfind("job.yaml:4:20: placement.allowed names unknown "
                                          "cluster \"gamma\"",
                                          0),
            0u)
      << unknown.error().message;
  auto team = backend_->submit_job(head + "team: nlp\n", "job.yaml", vic);
  ASSERT_FALSE(team.ok());
  EXPECT_EQ(team.error().kind, ErrorKind::forbidden);
  EXPECT_EQ(team.error().message.rfind("job.yaml:3:7: vic may not submit for team nlp", 0), 0u)
      << team.error().message;
  auto secret =
      backend_->submit_job(head + "secret_env:\n  HF_TOKEN: {secret: hf}\n", "job.yaml", vic);
  ASSERT_FALSE(secret.ok());
  EXPECT_EQ(secret.error().message.rfind("job.yaml:4:13: secret_env HF_TOKEN names secret", 0), 0u)
      << secret.error().message;
  auto granted = backend_->submit_job(head + "team: nlp\nsecret_env: {HF_TOKEN: {secret: hf}}\n",
                                      "job.yaml", Submitter{"nina", false, {"nlp"}});
  EXPECT_TRUE(granted.ok()) << granted.error().message;
  loop_->stop();
}

}  // namespace
}  // namespace orch
