// Team budgets' rule (placement/budget.h, issue 45): a month's spend against the budget, the
// thresholds crossed and not yet announced, and the words people read.
#include "scheduler/placement/budget.h"

#include <gmock/gmock.h>

namespace orch {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr Millis kDec15 = 1'797'292'800'000;  // 2026-12-15T00:00:00Z

TeamQuota::Budget money(double limit, std::string over = "hold") {
  TeamQuota::Budget b;
  b.configured = true;
  b.money = limit;
  b.over = std::move(over);
  return b;
}

TEST(BudgetRule, ATeamWithoutABudgetIsNeverOver) {
  const BudgetVerdict v = budget_verdict(TeamQuota::Budget{}, {1e9, 1e9});
  EXPECT_FALSE(v.budgeted);
  EXPECT_FALSE(v.over());
  EXPECT_THAT(thresholds_to_announce(v, {}), IsEmpty());
}

TEST(BudgetRule, SpendCrossesEightyThenOneHundredPercent) {
  EXPECT_EQ(budget_verdict(money(1000), {799.99, 0}).crossed, 0);
  EXPECT_EQ(budget_verdict(money(1000), {800, 0}).crossed, 80);
  EXPECT_FALSE(budget_verdict(money(1000), {999.99, 0}).over());
  EXPECT_TRUE(budget_verdict(money(1000), {1000, 0}).over());
}

TEST(BudgetRule, AGpuHourBudgetCountsGpuHoursNotMoney) {
  TeamQuota::Budget b;
  b.configured = true;
  b.gpu_hours = 100;
  const BudgetVerdict v = budget_verdict(b, {1e6, 85});
  EXPECT_FALSE(v.in_money);
  EXPECT_EQ(v.crossed, 80);
  EXPECT_EQ(budget_amount(v, 20000, "USD"), "20,000.0 GPU-hours");
}

TEST(BudgetRule, EachThresholdIsAnnouncedOnceAndAJumpAnnouncesBoth) {
  const BudgetVerdict v = budget_verdict(money(1000), {1500, 0});
  EXPECT_THAT(thresholds_to_announce(v, {}), ElementsAre(80, 100));
  EXPECT_THAT(thresholds_to_announce(v, {80}), ElementsAre(100));
  EXPECT_THAT(thresholds_to_announce(v, {80, 100}), IsEmpty());
}

TEST(BudgetRule, OverAClassRunsAtThatClassAndHoldRunsNothing) {
  EXPECT_EQ(budget_verdict(money(1000, "low"), {1001, 0}).run_at, "low");
  EXPECT_FALSE(budget_verdict(money(1000, "low"), {999, 0}).run_at.has_value());
  EXPECT_FALSE(budget_verdict(money(1000), {1001, 0}).run_at.has_value());
}

TEST(BudgetRule, TheReasonSaysWhatWasSpentOfWhatUntilWhen) {
  const BudgetVerdict held = budget_verdict(money(1000), {1012.5, 0});
  EXPECT_EQ(budget_reason("vision", held, "USD", kDec15),
            "team vision has spent 1,012.50 of its 1,000.00 USD budget for 2026-12; new jobs "
            "wait until 2027-01-01 or a larger budget");
  const BudgetVerdict lowered = budget_verdict(money(1000, "low"), {1012.5, 0});
  EXPECT_EQ(budget_reason("vision", lowered, "EUR", kDec15, 10),
            "team vision has spent 1,012.50 of its 1,000.00 EUR budget for 2026-12; its new jobs "
            "run at priority class low (10) until 2027-01-01");
  EXPECT_EQ(
      budget_notice("vision", budget_verdict(money(50000), {41234.567, 0}), 80, "USD", kDec15),
      "team vision has spent 41,234.57 of its 50,000.00 USD budget for 2026-12: past 80%");
}

}  // namespace
}  // namespace orch
