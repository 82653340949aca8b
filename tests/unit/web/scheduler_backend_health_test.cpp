// The real backend's health methods over a store the brain wrote: node standing through the
// brain's command path, burn-in rounds and their probes, the provider scorecards, MFU history
// and the checkpoint advice of a job; the shapes docs/rest-api.md promises.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "scheduler/brain/brain.h"
#include "scheduler/health/goodput.h"
#include "scheduler/health/renewal.h"
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

class SchedulerBackendHealthTest : public BackendFixture {
 protected:
  void SetUp() override {
    clock_.set_ms(kStart);
    open({make_cluster("alpha").vendor("acme"),
          make_cluster("beta").vendor("acme").burn_in_on_join()});
    handle(InventoryObserved{"alpha", {{{"a1", 4, true, ""}, {"a2", 4, true, ""}}}});
  }

  json nodes(std::optional<std::string> cluster, std::optional<std::string> state) {
    auto r = backend_->list_nodes(NodeFilter{std::move(cluster), std::move(state)});
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r ? (*r)["nodes"] : json::array();
  }
};

TEST_F(SchedulerBackendHealthTest, ListNodesWithTheirStanding) {
  json all = nodes(std::nullopt, std::nullopt);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], json({{"cluster", "alpha"},
                          {"name", "a1"},
                          {"gpus", 4},
                          {"gpus_busy", 0},
                          {"healthy", true},
                          {"reason", ""},
                          {"state", "active"},
                          {"quarantines", 0},
                          {"quarantined_at_ms", nullptr},
                          {"state_reason", ""},
                          {"seen_ms", kStart},
                          {"failures", 0},
                          {"failures_to_quarantine", 2},
                          {"window_h", 168.0},
                          {"next_failure", "2 more failures within 7 days quarantine it"},
                          // No work yet: its peers' rate is the prior's, 0.25 / (500 x 4 GPUs).
                          {"work_failures", 0},
                          {"work_gpu_hours", 0.0},
                          {"rate_per_gpu_h", 0.0},
                          {"cluster_rate_per_gpu_h", 0.25 / 2000},
                          {"rate_ratio", 0.0},
                          {"rate_p_value", 1.0},
                          {"lemon", false},
                          {"count_rule", true},
                          {"rate_evidence",
                           "0 failures in 0 GPU-hours: its cluster's rate is 0.00013/GPU-h, its "
                           "peers too little run to compare with"}}));
  // Two ledger entries of one incident count once.
  for (const char* kind : {"gpu-error", "node-failure"}) {
    NodeEventRow e{0, "alpha", "a1", kStart, kind, "under job 1", std::nullopt, std::nullopt};
    e.incident = "job 1 attempt 1";
    auto added = store_->add_node_event(e);
    ASSERT_TRUE(added.ok()) << added.error().message;
  }
  json a1 = nodes("alpha", std::nullopt)[0];
  EXPECT_EQ(a1["failures"], 1) << a1.dump();
  EXPECT_EQ(a1["next_failure"], "the next failure quarantines it");
  EXPECT_EQ(nodes("alpha", "active").size(), 2u);
  EXPECT_TRUE(nodes("beta", std::nullopt).empty());
  EXPECT_TRUE(nodes(std::nullopt, "quarantined").empty());
  auto unknown = backend_->list_nodes(NodeFilter{"zeta", std::nullopt});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
  auto bad = backend_->list_nodes(NodeFilter{std::nullopt, "sleepy"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid);
}

TEST_F(SchedulerBackendHealthTest, QuarantineAndReleaseGoThroughTheBrain) {
  loop_->start();
  auto q = backend_->set_node_state("alpha", "a2", true, "Xid 79 twice");
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_EQ(*q, json({{"cluster", "alpha"}, {"node", "a2"}, {"state", "quarantined"}}));
  json out = nodes("alpha", "quarantined");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["name"], "a2");
  EXPECT_EQ(out[0]["quarantines"], 0) << "a quarantine by hand does not count towards retiring";
  EXPECT_EQ(out[0]["quarantined_at_ms"], kStart);
  EXPECT_EQ(out[0]["state_reason"], "quarantined by hand: Xid 79 twice");

  auto unknown = backend_->set_node_state("alpha", "a9", true, "");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
  EXPECT_NE(unknown.error().message.find("a1, a2"), std::string::npos) << unknown.error().message;
  auto no_cluster = backend_->set_node_state("zeta", "a1", true, "");
  ASSERT_FALSE(no_cluster.ok());
  EXPECT_EQ(no_cluster.error().kind, ErrorKind::not_found);

  auto r = backend_->set_node_state("alpha", "a2", false, "");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["state"], "active");
  EXPECT_EQ(nodes("alpha", "active").size(), 2u);
}

TEST_F(SchedulerBackendHealthTest, BurnInRoundAndItsProbes) {
  loop_->start();
  auto started = backend_->start_burn_in("alpha");
  ASSERT_TRUE(started.ok()) << started.error().message;
  EXPECT_EQ((*started)["cluster"], "alpha");
  EXPECT_EQ((*started)["admission"], "burn-in");
  ASSERT_TRUE((*started)["round"].is_string());
  const std::string round = (*started)["round"];
  auto again = backend_->start_burn_in("alpha");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::conflict);
  EXPECT_EQ(backend_->start_burn_in("zeta").error().kind, ErrorKind::not_found);
  loop_->stop();  // the rest is handed to the brain here

  json clusters = backend_->list_clusters().value()["clusters"];
  EXPECT_EQ(clusters[0]["admission"], "burn-in");
  EXPECT_EQ(clusters[0]["vendor"], "acme");
  EXPECT_EQ(clusters[1]["admission"], "pending") << "beta burns in on join";

  std::int64_t outbox = 0;
  for (const auto& a : store_->pending_actions("alpha").value()) {
    if (a.token == round) outbox = a.id;
  }
  ASSERT_GT(outbox, 0);
  std::vector<ProbeResult> results(2);
  results[0].node = "a1";
  results[0].gemm_gflops = 100;
  results[0].write_mb_s = 800;
  results[0].read_mb_s = 900;
  results[0].raw = R"({"node":"a1","gemm_gflops":100})";
  results[1] = results[0];
  results[1].node = "a2";
  results[1].raw = "";
  handle(ProbeCompleted{outbox, "alpha", round, results});
  EXPECT_EQ(backend_->list_clusters().value()["clusters"][0]["admission"], "active");

  auto probes = backend_->cluster_probes("alpha", "", 100);
  ASSERT_TRUE(probes.ok()) << probes.error().message;
  ASSERT_EQ((*probes)["probes"].size(), 2u);
  for (const auto& p : (*probes)["probes"]) {
    EXPECT_EQ(p["round"], round);
    EXPECT_EQ(p["passed"], true) << p.dump();
    EXPECT_EQ(p["gemm_gflops"], 100.0);
    EXPECT_EQ(p["read_mb_s"], 900.0);
    if (p["node"] == "a1") {
      EXPECT_EQ(p["result"], json({{"node", "a1"}, {"gemm_gflops", 100}}));
    } else {
      EXPECT_TRUE(p["result"].is_null()) << "a2 printed nothing";
    }
  }
  auto one = backend_->cluster_probes("alpha", "a1", 100);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)["probes"].size(), 1u);
  EXPECT_EQ(backend_->cluster_probes("alpha", "a9", 100).error().kind, ErrorKind::not_found);
  EXPECT_EQ(backend_->cluster_probes("zeta", "", 100).error().kind, ErrorKind::not_found);
}

TEST_F(SchedulerBackendHealthTest, ProviderReportHasACardPerClusterAndVendor) {
  clock_.advance_ms(3600 * 1000);
  auto report = backend_->provider_report(7);
  ASSERT_TRUE(report.ok()) << report.error().message;
  const Millis now = kStart + 3600 * 1000;
  EXPECT_EQ((*report)["now_ms"], now);
  EXPECT_EQ((*report)["window_start_ms"], now - 7LL * 24 * 3600 * 1000);
  const json& cards = (*report)["cards"];
  ASSERT_EQ(cards.size(), 3u) << cards.dump();
  EXPECT_EQ(cards[0]["name"], "alpha");
  EXPECT_EQ(cards[0]["kind"], "cluster");
  EXPECT_EQ(cards[0]["nodes"], 2);
  EXPECT_EQ(cards[0]["availability"], 1.0);
  EXPECT_TRUE(cards[0]["node_mtbf_h"].is_null());
  EXPECT_TRUE(cards[0]["median_mfu"].is_null());
  EXPECT_EQ(cards[1]["name"], "beta");
  EXPECT_EQ(cards[2]["name"], "acme");
  EXPECT_EQ(cards[2]["kind"], "vendor");
  EXPECT_EQ(cards[2]["clusters"], json({"alpha", "beta"}));
  for (const char* key :
       {"gpu_hours", "interruptions", "interruptions_per_1k_gpu_h", "detection_median_s",
        "detection_p95_s", "recovery_median_s", "recovery_p95_s", "backoff_median_s",
        "placing_median_s", "site_median_s", "startup_median_s", "checkpoint_save_p95_s",
        "io_stalls", "quarantined_nodes", "quarantined_share"}) {
    EXPECT_TRUE(cards[0].contains(key)) << key;
  }
}

TEST_F(SchedulerBackendHealthTest, MfuHistoryAndCheckpointAdvice) {
  Submitter anyway;  // alpha could never hold it: refused at submit without (issue 42)
  anyway.queue_anyway = true;
  auto waiting = brain_->handle(SubmitJob{make_job().nodes(3).gpus(4).on({"alpha"}), anyway});
  ASSERT_TRUE(waiting.ok());
  EXPECT_TRUE(
      json::parse(backend_->get_job(waiting->job_id).value().text)["checkpoint_advice"].is_null())
      << "never placed: no cluster to advise on";

  auto submitted = brain_->handle(SubmitJob{make_job().nodes(1).gpus(4).on({"alpha"})});
  ASSERT_TRUE(submitted.ok());
  const std::int64_t id = submitted->job_id;
  OutboxRow launch = store_->pending_actions("alpha").value().at(0);

  handle(LaunchCompleted{launch.id, launch.token, LaunchResult{"77", {"a1"}}, false});
  std::vector<ProgressLine> reports = {ProgressReport{1, 4096, 0.5, std::nullopt, {}},
                                       ProgressReport{2, 4096, 0.5, std::nullopt, {}}};
  handle(AttemptObserved{
      "alpha", launch.token, RunPhase::running, std::nullopt, {"a1"}, reports, {}, {}});

  auto mfu = backend_->job_mfu(id);
  ASSERT_TRUE(mfu.ok()) << mfu.error().message;
  ASSERT_EQ((*mfu)["attempts"].size(), 1u);
  const json& a = (*mfu)["attempts"][0];
  EXPECT_EQ(a["no"], 1);
  EXPECT_EQ(a["cluster"], "alpha");
  EXPECT_EQ(a["nodes"], json({"a1"}));
  ASSERT_EQ(a["buckets"].size(), 1u) << a.dump();
  EXPECT_EQ(a["buckets"][0]["samples"], 2);
  EXPECT_GT(a["buckets"][0]["mfu"].get<double>(), 0);
  EXPECT_EQ(backend_->job_mfu(999).error().kind, ErrorKind::not_found);

  json advice = json::parse(backend_->get_job(id).value().text)["checkpoint_advice"];
  ASSERT_TRUE(advice.is_object()) << advice.dump();
  EXPECT_EQ(advice["cluster"], "alpha");
  // No history yet: the priors (60 s per checkpoint, 2000 h per node) and one node.
  EXPECT_EQ(advice["basis"], "prior");
  EXPECT_DOUBLE_EQ(advice["checkpoint_cost_s"].get<double>(), 60);
  EXPECT_NEAR(advice["job_mtbf_h"].get<double>(), 2000, 1);
  const double mtbf_s = advice["job_mtbf_h"].get<double>() * 3600;
  const double young = std::sqrt(2 * 60 * mtbf_s);
  // Issue 45: the interval is the exact renewal formula's best, Young's beside it.
  const double best = renewal_interval_s(60, mtbf_s);
  EXPECT_NEAR(advice["interval_s"].get<double>(), best, 1e-6);
  EXPECT_NEAR(advice["young_interval_s"].get<double>(), young, 1e-6);
  EXPECT_LT(best, young);
  // Steps 1..2 took 1 s in all: 0.5 s per step.
  EXPECT_EQ(advice["interval_steps"], std::llround(best / 0.5));
  EXPECT_GT(advice["ettr"].get<double>(), 0.9);
  EXPECT_GE(advice["ettr"].get<double>(), advice["ettr_first_order"].get<double>());
  EXPECT_TRUE(advice["expected_mfu"].is_number());
  // What the MTBF stands on: mostly the prior (a 1 s attempt is no evidence to speak of).
  EXPECT_NE(advice["mtbf_basis"], "measured") << advice.dump();
  EXPECT_LT(advice["evidence_node_hours"].get<double>(), 0.01);
  EXPECT_DOUBLE_EQ(advice["prior_node_hours"].get<double>(), 500);
  EXPECT_EQ(advice["node_failures"], 0);
  // The planner: the ETTR expected at a quarter, half, once, twice and four times the interval;
  // the best is the best of them, each the renewal formula's with the first order beside it.
  ASSERT_EQ(advice["around"].size(), 5u) << advice.dump();
  const json& at_best = advice["around"][2];
  EXPECT_NEAR(at_best["interval_s"].get<double>(), best, 1e-6);
  EXPECT_DOUBLE_EQ(at_best["ettr"].get<double>(), advice["ettr"].get<double>());
  const double restart = advice["restart_s"].get<double>();
  for (const json& point : advice["around"]) {
    const double tau = point["interval_s"].get<double>();
    EXPECT_LE(point["ettr"].get<double>(), at_best["ettr"].get<double>()) << point.dump();
    EXPECT_DOUBLE_EQ(point["ettr"].get<double>(), renewal_ettr(60, tau, restart, mtbf_s));
    EXPECT_DOUBLE_EQ(point["ettr_first_order"].get<double>(),
                     expected_ettr(60, tau, restart, mtbf_s));
  }
}

// The issue's 46,633%: a job whose model.parameters is far too large reports an MFU above
// 100%. It is flagged on the job and its attempt (what to fix), named by explain, and absent
// from the provider report, whose alpha card is the other job's MFU alone.
TEST_F(SchedulerBackendHealthTest, AnImplausibleMfuIsFlaggedOnTheJobAndLeftOutOfTheReport) {
  auto run = [&](JobSpec spec, const std::string& node) {
    auto submitted = brain_->handle(SubmitJob{spec});
    EXPECT_TRUE(submitted.ok());
    OutboxRow launch = store_->pending_actions("alpha").value().at(0);
    handle(LaunchCompleted{launch.id, launch.token, LaunchResult{"7" + node, {node}}, false});
    std::vector<ProgressLine> reports = {ProgressReport{1, 4096, 0.5, std::nullopt, {}},
                                         ProgressReport{2, 4096, 1.5, std::nullopt, {}}};
    handle(AttemptObserved{
        "alpha", launch.token, RunPhase::running, std::nullopt, {node}, reports, {}, {}});
    return submitted->job_id;
  };
  const std::int64_t fine = run(make_job().nodes(1).gpus(4).on({"alpha"}), "a1");
  JobSpec wrong = make_job().nodes(1).gpus(4).on({"alpha"});
  wrong.model = {};
  wrong.model.parameters = 1e15;
  const std::int64_t flagged = run(wrong, "a2");

  json job = json::parse(backend_->get_job(flagged).value().text);
  const std::string flag = job["mfu_flag"].get<std::string>();
  EXPECT_EQ(flag.rfind("model size or peak FLOPs misconfigured: MFU ", 0), 0u) << flag;
  EXPECT_NE(flag.find("is above 100% (model.parameters 1e+15"), std::string::npos) << flag;
  EXPECT_TRUE(job["mfu"].is_null());
  json attempts = backend_->job_attempts(flagged).value()["attempts"];
  EXPECT_EQ(attempts.at(0)["mfu_flag"], flag);
  EXPECT_EQ(backend_->explain_job(flagged).value()["mfu_flag"], flag);
  EXPECT_EQ(json::parse(backend_->get_job(fine).value().text)["mfu_flag"], "");

  // 4096 tokens in 0.5 s and 4096 in 1.5 s: 8192 tokens over 2 s, the fine job's own MFU.
  const double fine_mfu =
      8192 / 2.0 * 6.0e6 / (4 * *make_cluster("alpha").build().peak_flops_per_gpu());
  auto report = backend_->provider_report(7);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_NEAR((*report)["cards"][0]["median_mfu"].get<double>(), fine_mfu, 1e-15);
}

}  // namespace
}  // namespace orch
