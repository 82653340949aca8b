// The acceptance test of issue 45's cost accounting, by hand: two clusters with known prices, a
// job with one failure and one preemption on the first and a job on the second, every second of
// them placed by the brain on a fake clock. GET /reports/cost gives the useful and lost money to
// the cent, and /metrics and the job's view give the same totals.
#include <gmock/gmock.h>

#include <cmath>

#include "scheduler/brain/brain.h"
#include "tests/harness/builders.h"
#include "tests/unit/web/backend_fixture.h"
#include "web/backend/scheduler_backend.h"
#include "web/metrics_text.h"

namespace orch {
namespace {

using nlohmann::json;
using testing::make_cluster;
using testing::make_job;

constexpr Millis kStart = 1'796'086'800'000;  // 2026-12-01 01:00 UTC
constexpr Millis kS = 1000;

ClusterSpec priced(const std::string& name, double per_gpu_hour) {
  ClusterSpec c = make_cluster(name).vendor("acme");
  c.price.configured = true;
  c.price.per_gpu_hour = per_gpu_hour;
  c.price.currency = "USD";
  return c;
}

ExitStatus status(std::optional<int> code, std::optional<int> signal,
                  std::optional<ExitCause> cause = std::nullopt) {
  ExitStatus st;
  st.exit_code = code;
  st.signal = signal;
  st.cause = cause;
  return st;
}

long long cents(const json& money) {
  return std::llround(money.get<double>() * 100.0);
}

class CostAcceptance : public BackendFixture {
 protected:
  void SetUp() override {
    clock_.set_ms(kStart);
    open({priced("alpha", 2.00), priced("beta", 3.50)});
  }
  AttemptRow last(JobId id) { return store_->attempts_of(id).value().back(); }
  void at(Millis t_s) { clock_.set_ms(kStart + t_s * kS); }
  // The site confirms the cluster's pending launches and says they run.
  void launches(const std::string& cluster) {
    for (const auto& a : store_->pending_actions(cluster).value()) {
      if (a.kind != ActionKind::launch) continue;
      handle(LaunchCompleted{a.id, a.token, LaunchResult{"site-" + a.token, {cluster + "-n0"}},
                             false});
      handle(AttemptObserved{cluster, a.token, RunPhase::running, std::nullopt, {}, {}, {}});
    }
    answer_storage(cluster);
  }
  // Steps first..last of 60 s each, a checkpoint every 10 (listed and verified at once).
  void train(const AttemptRow& a, int first, int last_step) {
    std::vector<ProgressLine> lines;
    for (int s = first; s <= last_step; ++s) {
      lines.push_back(ProgressReport{s, 1000, 60.0, std::nullopt});
      if (s % 10 == 0) {
        lines.push_back(CheckpointReport{s, a.checkpoint_dir + "/step-" + std::to_string(s), 1});
      }
    }
    handle(AttemptObserved{a.cluster, a.token, RunPhase::running, std::nullopt, {}, lines, {}});
    answer_storage(a.cluster);
  }
  void exits(const AttemptRow& a, ExitStatus st) {
    handle(AttemptObserved{a.cluster, a.token, RunPhase::exited, st, {}, {}, {}});
    answer_storage(a.cluster);
  }
  // The site's storage answers every listing and deletion asked of it, faithfully.
  void answer_storage(const std::string& cluster) {
    for (int round = 0; round < 5; ++round) {
      bool any = false;
      for (const auto& a : store_->pending_actions(cluster).value()) {
        if (a.kind == ActionKind::manifest) {
          Manifest m;
          m.files.push_back({"", 1000, std::string(64, 'a')});
          handle(ManifestCompleted{a.id, cluster, a.payload, m});
          any = true;
        } else if (a.kind == ActionKind::remove) {
          handle(RemoveCompleted{a.id, cluster, a.payload, Ok{}});
          any = true;
        }
      }
      if (!any) return;
    }
  }
  json report(const std::string& by) {
    auto r = backend_->cost_report(CostQuery{by, "2026-12-01"});
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : json::object();
  }
  static const json& row(const json& report, const std::string& key) {
    static const json kNone;
    for (const auto& r : report["rows"]) {
      if (r["key"] == key) return r;
    }
    ADD_FAILURE() << "no row " << key << " in " << report.dump();
    return kNone;
  }

  // Job 1 (team nlp) on beta: 60 s queued, 60 s of start-up, an hour of steps, succeeds.
  // Job 2 (team vision) on alpha: 60 s queued, 120 s start-up, steps 1-25 (a checkpoint at 20),
  // its node dies 600 s after step 25 (steps 21-25, 300 s, are redone); attempt 2 waits 30 s,
  // starts in 90 s, makes steps 21-33 and is preempted 1800 s later (31-33, 180 s, redone);
  // attempt 3 waits 30 s, starts in 60 s and finishes in 600 s.
  void run_both() {
    const JobId b = submit(make_job().gpus(4).on({"beta"}).team("nlp"));
    at(60);
    launches("beta");
    at(120);
    train(last(b), 1, 10);
    at(3720);
    exits(last(b), status(0, std::nullopt));

    at(4000);
    job = submit(make_job().gpus(4).on({"alpha"}).team("vision").infra_restarts(5));
    at(4060);
    launches("alpha");
    at(4180);
    train(last(job), 1, 20);
    at(7780);
    train(last(job), 21, 25);
    at(8380);
    exits(last(job), status(std::nullopt, 9));  // killed
    ASSERT_EQ(last(job).no, 2) << "placed again in the event that ended attempt 1";
    at(8410);
    launches("alpha");
    at(8500);
    train(last(job), 21, 33);
    at(10300);
    exits(last(job), status(std::nullopt, 15, ExitCause::preempted));
    ASSERT_EQ(last(job).no, 3) << "placed again in the event that ended attempt 2";
    at(10330);
    launches("alpha");
    at(10390);
    train(last(job), 31, 40);
  }
  JobId submit(const JobSpec& spec) {
    auto r = brain_->handle(SubmitJob{spec});
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? r->job_id : 0;
  }
  JobId job = 0;
};

TEST_F(CostAcceptance, ReportCostGivesUsefulAndLostMoneyToTheCentByEveryGrouping) {
  run_both();
  at(10990);
  exits(last(job), status(0, std::nullopt));
  const auto attempts = store_->attempts_of(job).value();
  ASSERT_EQ(attempts.size(), 3u);
  EXPECT_EQ(attempts[0].steps_lost, 5);
  EXPECT_EQ(attempts[1].steps_lost, 3);

  // alpha, 4 GPUs at 2.00 USD: useful (3900 + 1620 + 600) s = 6.8 GPU-h = 13.60; redone
  // (300 + 180) s = 1.07; restart (120 + 90 + 60) s = 0.60; queued (60 + 30 + 30) s = 0.27.
  const json by_cluster = report("cluster");
  EXPECT_EQ(by_cluster["currency"], "USD");
  const json& alpha = row(by_cluster, "alpha")["money"];
  EXPECT_EQ(cents(alpha["useful"]), 1360);
  EXPECT_EQ(cents(alpha["redone"]), 107);
  EXPECT_EQ(cents(alpha["restart"]), 60);
  EXPECT_EQ(cents(alpha["queued"]), 27);
  EXPECT_EQ(cents(alpha["failed"]), 0);
  EXPECT_EQ(cents(alpha["lost"]), 193);
  EXPECT_EQ(cents(alpha["total"]), 1553);
  EXPECT_NEAR(row(by_cluster, "alpha")["gpu_hours"]["useful"].get<double>(), 6.8, 1e-9);
  // beta, 4 GPUs at 3.50 USD: useful 3600 s = 14.00; queued 60 s and restart 60 s, 0.23 each.
  const json& beta = row(by_cluster, "beta")["money"];
  EXPECT_EQ(cents(beta["useful"]), 1400);
  EXPECT_EQ(cents(beta["lost"]), 47);
  EXPECT_EQ(cents(by_cluster["total"]["money"]["total"]), 3000);

  EXPECT_EQ(cents(row(report("team"), "vision")["money"]["lost"]), 193);
  EXPECT_EQ(cents(row(report("team"), "nlp")["money"]["useful"]), 1400);
  EXPECT_EQ(cents(row(report("vendor"), "acme")["money"]["total"]), 3000);
  const json jobs = report("job");
  const json& by_job = row(jobs, std::to_string(job));
  EXPECT_EQ(cents(by_job["money"]["useful"]), 1360);
  EXPECT_EQ(cents(by_job["money"]["lost"]), 193);
  EXPECT_EQ(by_job["team"], "vision");
}

TEST_F(CostAcceptance, MetricsAndTheJobViewGiveTheReportsTotals) {
  run_both();
  at(10990);
  exits(last(job), status(0, std::nullopt));
  const json alpha = row(report("cluster"), "alpha");

  auto snapshot = backend_->metrics();
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().message;
  double useful = 0, lost = 0;
  for (const auto& c : snapshot->costs) {
    if (c.cluster != "alpha") continue;
    (c.kind == "useful" ? useful : lost) += c.money;
  }
  EXPECT_EQ(std::llround(useful * 100), cents(alpha["money"]["useful"]));
  EXPECT_EQ(std::llround(lost * 100), cents(alpha["money"]["lost"]));
  EXPECT_THAT(
      metrics_text(*snapshot),
      ::testing::HasSubstr(
          "orchestrate_cost_total{team=\"vision\",cluster=\"alpha\",kind=\"useful\"} 13.6"));

  auto view = backend_->get_job(job);
  ASSERT_TRUE(view.ok());
  const json cost = json::parse(view->text)["cost"];
  EXPECT_EQ(cents(cost["money"]["useful"]), 1360);
  EXPECT_EQ(cents(cost["money"]["lost"]), 193);
  EXPECT_EQ(cost["currency"], "USD");
}

TEST_F(CostAcceptance, ALiveAttemptCountsUpToNowAndItsEndLeavesTheTotalsWhereTheyWere) {
  run_both();
  at(10690);  // attempt 3: 30 s queued, 60 s start-up, 300 s of steps so far
  const json live = row(report("cluster"), "alpha")["money"];
  // Useful so far: (3900 + 1620 + 300) s x 4 GPUs at 2.00 = 12.93.
  EXPECT_EQ(cents(live["useful"]), 1293);
  EXPECT_EQ(cents(live["lost"]), 193);
  auto totals = store_->cost_totals().value();
  double tallied = 0;
  for (const auto& r : totals) tallied += r.cluster == "alpha" ? r.money : 0;
  // Attempts 1 (9.73) and 2 (4.27): the tally holds the ended attempts alone.
  EXPECT_EQ(std::llround(tallied * 100), 1400);
}

TEST_F(CostAcceptance, AScorecardSaysWhatItsClusterCostAndWhatAThousandBought) {
  run_both();
  at(10990);
  exits(last(job), status(0, std::nullopt));
  auto r = backend_->provider_report(30);
  ASSERT_TRUE(r.ok());
  for (const auto& card : (*r)["cards"]) {
    if (card["name"] != "alpha") continue;
    EXPECT_EQ(cents(card["cost"]["money"]["total"]), 1553);
    // 6.8 useful GPU-hours for 15.53 USD: 437.9 per 1,000 USD.
    EXPECT_NEAR(card["cost"]["useful_gpu_hours_per_1k"].get<double>(), 6.8 / 15.5333333 * 1000,
                0.01);
    return;
  }
  ADD_FAILURE() << "no card for alpha";
}

TEST_F(CostAcceptance, ABadGroupingOrDateIsRefusedNamingIt) {
  auto by = backend_->cost_report(CostQuery{"node", ""});
  ASSERT_FALSE(by.ok());
  EXPECT_EQ(by.error().message, "by must be job, team, cluster or vendor, got \"node\"");
  auto since = backend_->cost_report(CostQuery{"team", "2026-13-01"});
  ASSERT_FALSE(since.ok());
  EXPECT_THAT(since.error().message, ::testing::HasSubstr("got \"2026-13-01\""));
}

}  // namespace
}  // namespace orch
