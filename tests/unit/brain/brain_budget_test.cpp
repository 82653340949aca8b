// Team budgets (issue 45, docs/scheduling.md "Budgets"): a team's month-to-date spend against
// its monthly budget; at 80% and 100% one `budget` notice each (the webhook's), kept across
// restarts; past 100% its new jobs wait with the reason (or run at a lower class) while its
// running jobs go on; the next month releases them. A fake clock, the site's part played.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

constexpr Millis kDec15 = 1'797'292'800'000;  // 2026-12-15T00:00:00Z
constexpr Millis kJan1 = 1'798'761'600'000;   // 2027-01-01T00:00:00Z
constexpr Millis kHour = 3'600'000;

class BrainBudget : public BrainFixture {
 protected:
  // alpha: 2 nodes x 4 GPUs at 10 USD per GPU-hour; team vision may spend 1,000 USD a month.
  void start_with(const std::string& over) {
    ClusterSpec alpha = make_cluster("alpha");
    alpha.price.configured = true;
    alpha.price.per_gpu_hour = 10;
    alpha.price.currency = "USD";
    clusters = {alpha};
    scheduling.priority_classes = {{"low", 10}, {"normal", 100}};
    TeamQuota vision;
    vision.budget.configured = true;
    vision.budget.money = 1000;
    vision.budget.over = over;
    scheduling.teams = {{"vision", vision}, {"nlp", TeamQuota{}}};
    clock.set_ms(kDec15);
    start(clusters, scheduling);
  }

  JobSpec job(const std::string& team, int gpus) {
    JobSpec spec = make_job().gpus(gpus).team(team).priority(100);
    spec.health.startup_timeout_s = 0;  // these jobs train for days without a line
    spec.health.hang_after_s = 0;
    return spec;
  }

  // The `budget` notices written so far (what a webhook asking for `budget` is told).
  std::vector<std::string> budget_notices() {
    std::vector<std::string> out;
    for (const auto& n : store->notices_after(0, 1000).value()) {
      if (n.kind == "budget") out.push_back(n.message);
    }
    return out;
  }

  void tick_at(Millis at) {
    clock.set_ms(at);
    handle(Tick{});
  }

  std::vector<ClusterSpec> clusters;
  SchedulingSpec scheduling;
};

TEST_F(BrainBudget, ABudgetCrossedMidMonthHoldsNewJobsWithTheReasonAndNotifiesEachThresholdOnce) {
  start_with("hold");
  const JobId running = submit(job("vision", 4));
  site_launches_all("alpha");
  ASSERT_EQ(carrying(running).size(), 1u);

  // 4 GPUs x 19 h x 10 USD = 760: under 80%, nothing said.
  tick_at(kDec15 + 19 * kHour);
  EXPECT_TRUE(budget_notices().empty());
  // 20 h: 800, 80% crossed: one notice, however many ticks follow.
  tick_at(kDec15 + 20 * kHour);
  tick_at(kDec15 + 20 * kHour + 5 * 60'000);
  ASSERT_EQ(budget_notices().size(), 1u);
  EXPECT_EQ(budget_notices()[0],
            "team vision has spent 800.00 of its 1,000.00 USD budget for 2026-12: past 80%");

  // 25 h 18 min: 1,012.00 spent. The running job goes on; a new one waits with the reason.
  tick_at(kDec15 + 25 * kHour + 18 * 60'000);
  ASSERT_EQ(budget_notices().size(), 2u);
  EXPECT_THAT(budget_notices()[1], HasSubstr("1,012.00 of its 1,000.00 USD budget"));
  EXPECT_THAT(budget_notices()[1], HasSubstr("past 100%"));
  const JobId held = submit(job("vision", 4));
  EXPECT_TRUE(attempts(held).empty());
  const JobRow row = store->job(held).value().value();
  EXPECT_EQ(row.state, JobState::pending);
  EXPECT_EQ(row.reason,
            "team vision has spent 1,012.00 of its 1,000.00 USD budget for 2026-12; new jobs "
            "wait until 2027-01-01 or a larger budget");
  EXPECT_EQ(carrying(running).size(), 1u) << "running jobs are not stopped";

  // A restart remembers what was announced.
  brain.reset();
  brain =
      std::make_unique<Brain>(*store, clock, clusters, PlacementPipeline::standard(), scheduling);
  ASSERT_TRUE(brain->start().ok());
  tick_at(kDec15 + 30 * kHour);
  EXPECT_EQ(budget_notices().size(), 2u);
  EXPECT_TRUE(attempts(held).empty());

  // The next month releases it: its spend starts again from nothing.
  tick_at(kJan1);
  ASSERT_EQ(carrying(held).size(), 1u);
  EXPECT_EQ(budget_notices().size(), 2u);
}

TEST_F(BrainBudget, AnotherTeamsJobsAreNotHeldByOnesBudget) {
  start_with("hold");
  submit(job("vision", 4));
  site_launches_all("alpha");
  tick_at(kDec15 + 26 * kHour);  // 1,040 USD: vision is past its budget
  const JobId nlp = submit(job("nlp", 4));
  EXPECT_EQ(carrying(nlp).size(), 1u);
}

TEST_F(BrainBudget, PastItsBudgetWithOverAClassATeamsNewJobRunsAtThatClassAndSaysWhy) {
  start_with("low");
  submit(job("vision", 4));
  site_launches_all("alpha");
  tick_at(kDec15 + 26 * kHour);
  const JobId lowered = submit(job("vision", 4));
  EXPECT_EQ(carrying(lowered).size(), 1u);
  const JobRow row = store->job(lowered).value().value();
  EXPECT_EQ(row.spec.priority, 10);
  bool said = false;
  for (const auto& e : store->events_of(lowered).value()) {
    if (e.kind != "budget-lowered") continue;
    said = true;
    EXPECT_EQ(e.message,
              "team vision has spent 1,040.00 of its 1,000.00 USD budget for 2026-12; its new "
              "jobs run at priority class low (10) until 2027-01-01");
  }
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace orch::testing
