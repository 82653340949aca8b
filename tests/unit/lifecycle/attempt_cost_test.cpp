// What each attempt's GPU-hours bought (scheduler/lifecycle/attempt_cost.h): queueing, start-up,
// steps re-done, attempts that kept nothing and useful work, each priced over its own span, on the
// same accounting as ETTR (job_stats.h).
#include "scheduler/lifecycle/attempt_cost.h"

#include <gmock/gmock.h>

#include <map>

#include "scheduler/lifecycle/cost_tally.h"
#include "scheduler/lifecycle/job_stats.h"

namespace orch {
namespace {

constexpr Millis kT0 = 1'796'083'200'000;  // 2026-12-01 00:00 UTC
constexpr Millis kMinute = 60'000;
constexpr Millis kHour = 60 * kMinute;

double part(const CostSplit& s, CostKind kind) {
  return s.gpu_hours[static_cast<std::size_t>(kind)];
}
double money(const CostSplit& s, CostKind kind) {
  return s.money[static_cast<std::size_t>(kind)];
}

// An attempt of job 7 on `cluster` holding 4 GPUs from kT0.
AttemptRow attempt(int no, const std::string& cluster = "alpha") {
  AttemptRow a;
  a.id = 100 + no;
  a.job_id = 7;
  a.no = no;
  a.cluster = cluster;
  a.gpus = 4;
  a.started_ms = kT0;
  return a;
}

// Steps first..last in `step_s` seconds each, the first line at `first`, the last at `last`.
void made_steps(AttemptRow& a, std::int64_t first, std::int64_t last, double step_s,
                Millis first_line, Millis last_line) {
  a.first_step = first;
  a.last_step = last;
  a.step_time_total = step_s * static_cast<double>(last - first + 1);
  a.first_progress_ms = first_line;
  a.last_progress_ms = last_line;
}

class AttemptCostTest : public ::testing::Test {
 protected:
  AttemptCostTest() {
    prices_["alpha"].configured = true;
    prices_["alpha"].per_gpu_hour = 2.0;
  }
  std::vector<AttemptCost> costs(const std::vector<AttemptRow>& attempts, Millis now) {
    return attempt_costs(
        attempts,
        [this](const std::string& cluster) -> const PriceSpec* {
          auto it = prices_.find(cluster);
          return it == prices_.end() ? nullptr : &it->second;
        },
        now);
  }
  std::map<std::string, PriceSpec> prices_;
};

TEST_F(AttemptCostTest, QueueingStartUpStepsRedoneAndUsefulWorkSplitTheAttemptsTime) {
  // Queued 1 h, starting 30 min, steps 1..100 at 144 s each (4 h) of which the next attempt
  // redid 25 (1 h), ended 30 min after its last progress line: 6 h on 4 GPUs.
  AttemptRow a = attempt(1);
  a.running_ms = kT0 + kHour;
  made_steps(a, 1, 100, 144, kT0 + 90 * kMinute, kT0 + 330 * kMinute);
  a.steps_lost = 25;
  a.ended_ms = kT0 + 6 * kHour;
  a.cause = ExitCause::gpu_error;
  const auto out = costs({a}, kT0 + 10 * kHour);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].attempt, 101);
  EXPECT_EQ(out[0].job, 7);
  EXPECT_EQ(out[0].no, 1);
  EXPECT_EQ(out[0].cluster, "alpha");
  const CostSplit& s = out[0].split;
  EXPECT_NEAR(part(s, CostKind::queued), 4 * 1.0, 1e-9);
  EXPECT_NEAR(part(s, CostKind::restart), 4 * 0.5, 1e-9);
  EXPECT_NEAR(part(s, CostKind::redone), 4 * 1.0, 1e-9);
  EXPECT_NEAR(part(s, CostKind::useful), 4 * 3.5, 1e-9);
  EXPECT_EQ(part(s, CostKind::failed), 0);
  EXPECT_NEAR(s.gpu_hours_total(), 4 * 6.0, 1e-9);
  EXPECT_NEAR(s.lost_gpu_hours(), 4 * 2.5, 1e-9);
  EXPECT_NEAR(money(s, CostKind::useful), 4 * 3.5 * 2.0, 1e-9);
  EXPECT_NEAR(s.money_total(), 48.0, 1e-9);
  EXPECT_NEAR(s.lost_money(), 20.0, 1e-9);
}

TEST_F(AttemptCostTest, StepsRedonePlusWhatEttrCountsProductiveIsTheAttemptsStepTime) {
  AttemptRow a = attempt(1);
  a.running_ms = kT0;
  made_steps(a, 11, 60, 30, kT0 + 5 * kMinute, kT0 + 30 * kMinute);
  a.steps_lost = 20;
  a.ended_ms = kT0 + 31 * kMinute;
  const auto split = costs({a}, a.ended_ms.value())[0].split;
  const JobStats stats = compute_job_stats({a}, *a.ended_ms);
  ASSERT_TRUE(stats.productive_s.has_value());
  EXPECT_NEAR(part(split, CostKind::redone) / a.gpus * 3600 + *stats.productive_s,
              a.step_time_total, 1e-6);
}

TEST_F(AttemptCostTest, AnAttemptThatEndedBeforeKeepingAStepIsFailedBeyondItsRedoneSteps) {
  // Started at once, first line after 10 min, 10 steps of 60 s, all of them redone, ended 10 min
  // after its last line.
  AttemptRow a = attempt(1);
  a.running_ms = kT0;
  made_steps(a, 1, 10, 60, kT0 + 10 * kMinute, kT0 + 20 * kMinute);
  a.steps_lost = 10;
  a.ended_ms = kT0 + 30 * kMinute;
  a.cause = ExitCause::network_error;
  const CostSplit s = costs({a}, kT0 + kHour)[0].split;
  EXPECT_EQ(part(s, CostKind::queued), 0);
  EXPECT_NEAR(part(s, CostKind::restart), 4 * 10.0 / 60, 1e-9);
  EXPECT_NEAR(part(s, CostKind::redone), 4 * 10.0 / 60, 1e-9);
  EXPECT_NEAR(part(s, CostKind::failed), 4 * 10.0 / 60, 1e-9);
  EXPECT_EQ(part(s, CostKind::useful), 0);
  EXPECT_NEAR(s.lost_money(), s.money_total(), 1e-12);
}

TEST_F(AttemptCostTest, AnAttemptThatDiedBeforeItsFirstProgressLineIsAllStartUp) {
  AttemptRow a = attempt(1);
  a.running_ms = kT0 + 15 * kMinute;
  a.ended_ms = kT0 + 45 * kMinute;
  a.cause = ExitCause::user_error;
  const CostSplit s = costs({a}, kT0 + kHour)[0].split;
  EXPECT_NEAR(part(s, CostKind::queued), 4 * 0.25, 1e-9);
  EXPECT_NEAR(part(s, CostKind::restart), 4 * 0.5, 1e-9);
  EXPECT_NEAR(s.gpu_hours_total(), 4 * 0.75, 1e-9);
}

TEST_F(AttemptCostTest, AnAttemptThatNeverRanIsAllQueueing) {
  AttemptRow a = attempt(1);
  a.ended_ms = kT0 + 20 * kMinute;
  a.cause = ExitCause::launch_failed;
  const CostSplit s = costs({a}, kT0 + kHour)[0].split;
  EXPECT_NEAR(part(s, CostKind::queued), 4 * 20.0 / 60, 1e-9);
  EXPECT_NEAR(s.gpu_hours_total(), part(s, CostKind::queued), 1e-12);
}

TEST_F(AttemptCostTest, ALiveAttemptCountsUpToNowAndItsStepsAreUsefulUntilSomeoneRedoesThem) {
  AttemptRow a = attempt(2);
  a.running_ms = kT0 + 10 * kMinute;
  made_steps(a, 1, 50, 60, kT0 + 20 * kMinute, kT0 + 70 * kMinute);
  const CostSplit s = costs({a}, kT0 + 2 * kHour)[0].split;
  EXPECT_NEAR(part(s, CostKind::queued), 4 * 10.0 / 60, 1e-9);
  EXPECT_NEAR(part(s, CostKind::restart), 4 * 10.0 / 60, 1e-9);
  EXPECT_NEAR(part(s, CostKind::useful), 4 * 100.0 / 60, 1e-9);
  EXPECT_EQ(part(s, CostKind::failed), 0);
  EXPECT_NEAR(s.gpu_hours_total(), 4 * 2.0, 1e-9);
}

TEST_F(AttemptCostTest, AJobThatSucceededWithoutProgressLinesDidUsefulWork) {
  AttemptRow a = attempt(1);
  a.running_ms = kT0;
  a.ended_ms = kT0 + kHour;
  a.cause = ExitCause::succeeded;
  const CostSplit s = costs({a}, kT0 + 2 * kHour)[0].split;
  EXPECT_NEAR(part(s, CostKind::useful), 4.0, 1e-9);
  EXPECT_EQ(part(s, CostKind::restart), 0);
}

TEST_F(AttemptCostTest, AnAttemptThatNeverLaunchedCostsNothing) {
  AttemptRow a = attempt(2);
  a.ended_ms = kT0 + kHour;
  a.not_launched = "its checkpoint at step 20 was gone";
  const auto out = costs({a}, kT0 + 2 * kHour);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].split.gpu_hours_total(), 0);
  EXPECT_EQ(out[0].split.money_total(), 0);
}

TEST_F(AttemptCostTest, AClusterWithoutAPriceCountsGpuHoursButNoMoney) {
  AttemptRow a = attempt(1, "gone");
  a.running_ms = kT0;
  a.ended_ms = kT0 + kHour;
  const CostSplit s = costs({a}, kT0 + kHour)[0].split;
  EXPECT_NEAR(s.gpu_hours_total(), 4.0, 1e-9);
  EXPECT_EQ(s.money_total(), 0);
}

TEST_F(AttemptCostTest, EachPartIsPricedOverItsOwnSpanOfTime) {
  // 3.00 by day, 1.00 from 22:00: queued 21:00-23:00 costs 1 h at each rate; the steps after it
  // run at night.
  PriceSpec& p = prices_["alpha"];
  p.per_gpu_hour = 3.0;
  p.windows.push_back(PriceWindow{"22:00-06:00", 22 * 60, 6 * 60, 1.0});
  AttemptRow a = attempt(1);
  a.started_ms = kT0 + 21 * kHour;
  a.running_ms = kT0 + 23 * kHour;
  made_steps(a, 1, 60, 60, kT0 + 23 * kHour, kT0 + 24 * kHour);
  a.ended_ms = kT0 + 24 * kHour;
  a.cause = ExitCause::succeeded;
  const CostSplit s = costs({a}, kT0 + 30 * kHour)[0].split;
  EXPECT_NEAR(money(s, CostKind::queued), 4 * (3.0 + 1.0), 1e-9);
  EXPECT_NEAR(money(s, CostKind::useful), 4 * 1.0, 1e-9);
}

TEST_F(AttemptCostTest, SplitsAddUpAcrossAttempts) {
  CostSplit total;
  AttemptRow first = attempt(1);
  first.running_ms = kT0;
  first.ended_ms = kT0 + kHour;
  AttemptRow second = attempt(2);
  second.started_ms = kT0 + 2 * kHour;
  second.running_ms = kT0 + 2 * kHour;
  second.ended_ms = kT0 + 4 * kHour;
  for (const auto& c : costs({first, second}, kT0 + 5 * kHour)) total.add(c.split);
  EXPECT_NEAR(total.gpu_hours_total(), 4 * 3.0, 1e-9);
  EXPECT_NEAR(total.money_total(), 4 * 3.0 * 2.0, 1e-9);
}

TEST_F(AttemptCostTest, AnAttemptAcrossAMonthsEdgeIsTalliedInEachMonthForTheTimeItRanThere) {
  // Queued for an hour from 2026-11-30 22:00, then useful until 2026-12-01 02:00.
  AttemptRow a = attempt(1);
  a.started_ms = kT0 - 2 * kHour;
  a.running_ms = kT0 - kHour;
  made_steps(a, 1, 180, 60.0, kT0 - kHour, kT0 + 2 * kHour);
  a.state = AttemptState::exited;
  a.cause = ExitCause::succeeded;
  a.ended_ms = kT0 + 2 * kHour;
  std::map<std::string, double> gpu_hours, dollars;
  for (const CostTallyRow& r : ended_attempt_tally(a, &prices_["alpha"])) {
    gpu_hours[r.month + " " + r.kind] += r.gpu_hours;
    dollars[r.month] += r.money;
  }
  EXPECT_NEAR(gpu_hours["2026-11 queued"], 4 * 1.0, 1e-9);
  EXPECT_NEAR(gpu_hours["2026-11 useful"], 4 * 1.0, 1e-9);
  EXPECT_NEAR(gpu_hours["2026-12 useful"], 4 * 2.0, 1e-9);
  EXPECT_EQ(gpu_hours.count("2026-12 queued"), 0U);
  EXPECT_NEAR(dollars["2026-11"], 4 * 2.0 * 2.0, 1e-9);
  EXPECT_NEAR(dollars["2026-12"], 4 * 2.0 * 2.0, 1e-9);
  // The window of the whole attempt is the plain split.
  const CostSplit whole =
      attempt_cost_within(a, &prices_["alpha"], *a.ended_ms, kT0 - kHour * 24, kT0 + kHour * 24);
  EXPECT_NEAR(whole.money_total(), costs({a}, *a.ended_ms).front().split.money_total(), 1e-9);
}

TEST(CostKindName, EachKindHasTheNameReportsUse) {
  EXPECT_STREQ(cost_kind_name(CostKind::useful), "useful");
  EXPECT_STREQ(cost_kind_name(CostKind::redone), "redone");
  EXPECT_STREQ(cost_kind_name(CostKind::restart), "restart");
  EXPECT_STREQ(cost_kind_name(CostKind::queued), "queued");
  EXPECT_STREQ(cost_kind_name(CostKind::failed), "failed");
}

}  // namespace
}  // namespace orch
