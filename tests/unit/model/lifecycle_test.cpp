// Lifecycle arithmetic: MFU, exit classification, backoff, budgets, steps lost and ETTR.
#include <gmock/gmock.h>

#include <csignal>

#include "scheduler/lifecycle/exit_classifier.h"
#include "scheduler/lifecycle/job_stats.h"
#include "scheduler/lifecycle/mfu.h"
#include "scheduler/lifecycle/restart_history.h"
#include "scheduler/lifecycle/restart_policy.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {
namespace {

TEST(Mfu, SevenBillionParametersOnEightH100s) {
  // 7e9 params -> 4.2e10 FLOP/token. 8 x 989 TFLOP/s; 75,000 tokens/s -> 3.15e15 / 7.912e15.
  ClusterSpec c;
  c.accelerator = "h100";
  auto mfu = compute_mfu(75'000, 1.0, 4.2e10, 8, c.peak_flops_per_gpu());
  ASSERT_TRUE(mfu.has_value());
  EXPECT_NEAR(*mfu, 3.15e15 / 7.912e15, 1e-12);
}

TEST(Mfu, ClusterOverrideBeatsTheTable) {
  ClusterSpec c;
  c.accelerator = "h100";
  c.peak_tflops = 500;
  EXPECT_DOUBLE_EQ(*c.peak_flops_per_gpu(), 500e12);
  c.peak_tflops.reset();
  c.accelerator = "unknown-chip";
  EXPECT_FALSE(c.peak_flops_per_gpu().has_value());
}

TEST(Mfu, MissingInputsGiveNoNumber) {
  EXPECT_FALSE(compute_mfu(100, 1, std::nullopt, 1, 1e12));
  EXPECT_FALSE(compute_mfu(100, 0, 1e6, 1, 1e12));
  EXPECT_FALSE(compute_mfu(100, 1, 1e6, 0, 1e12));
  EXPECT_FALSE(compute_mfu(100, 1, 1e6, 1, std::nullopt));
}

ExitStatus code(int c) {
  return ExitStatus{c, std::nullopt, "", false};
}
ExitStatus sig(int s) {
  return ExitStatus{std::nullopt, s, "", false};
}

TEST(ExitClassifier, Table) {
  EXPECT_EQ(classify_exit(code(0), false), ExitCause::succeeded);
  EXPECT_EQ(classify_exit(code(1), false), ExitCause::user_error);
  EXPECT_EQ(classify_exit(code(3), false), ExitCause::user_error);
  EXPECT_EQ(classify_exit(code(128 + SIGKILL), false), ExitCause::killed_by_signal);
  EXPECT_EQ(classify_exit(code(128 + SIGTERM), false), ExitCause::killed_by_signal);
  EXPECT_EQ(classify_exit(sig(SIGKILL), false), ExitCause::killed_by_signal);
  EXPECT_EQ(classify_exit(sig(SIGTERM), true), ExitCause::cancelled);
  EXPECT_EQ(classify_exit(code(1), true), ExitCause::cancelled);
  ExitStatus lost{std::nullopt, std::nullopt, "NODE_FAIL", true};
  EXPECT_EQ(classify_exit(lost, false), ExitCause::node_lost);
  EXPECT_EQ(classify_exit(ExitStatus{}, false), ExitCause::lost);
  // A cause the provider states wins over the exit code, but not over our own cancel.
  ExitStatus timeout{std::nullopt, SIGTERM, "TIMEOUT", false, ExitCause::time_limit};
  EXPECT_EQ(classify_exit(timeout, false), ExitCause::time_limit);
  EXPECT_EQ(classify_exit(timeout, true), ExitCause::cancelled);
  ExitStatus oom{137, std::nullopt, "OUT_OF_MEMORY", false, ExitCause::out_of_memory};
  EXPECT_EQ(classify_exit(oom, false), ExitCause::out_of_memory);
}

TEST(Backoff, GrowsGeometricallyAndIsCapped) {
  BackoffSpec b{2, 10, 2};
  EXPECT_EQ(backoff_ms(b, 1), 2000);
  EXPECT_EQ(backoff_ms(b, 2), 4000);
  EXPECT_EQ(backoff_ms(b, 3), 8000);
  EXPECT_EQ(backoff_ms(b, 4), 10000);
  EXPECT_EQ(backoff_ms(b, 50), 10000);
}

TEST(RestartPolicy, BudgetsAreSeparate) {
  RestartPolicy p;
  p.max_infra_restarts = 1;
  p.max_user_restarts = 0;
  auto infra = decide_after_exit(p, 1, 0, ExitCause::site_down);
  EXPECT_EQ(infra.verdict, AfterExit::Verdict::resume);
  EXPECT_TRUE(infra.spends_infra);
  EXPECT_EQ(infra.delay_ms, 0) << "the first infra failure in a row resumes at once";
  EXPECT_EQ(decide_after_exit(p, 2, 0, ExitCause::site_down).verdict, AfterExit::Verdict::fail);
  EXPECT_EQ(decide_after_exit(p, 1, 0, ExitCause::user_error).verdict, AfterExit::Verdict::fail);
  EXPECT_EQ(decide_after_exit(p, 5, 5, ExitCause::succeeded).verdict, AfterExit::Verdict::succeed);
  EXPECT_EQ(decide_after_exit(p, 1, 0, ExitCause::cancelled).verdict, AfterExit::Verdict::ignore);
  p.max_infra_restarts = 0;
  EXPECT_EQ(decide_after_exit(p, 1, 0, ExitCause::node_lost).verdict, AfterExit::Verdict::fail)
      << "0: never restart after an infra failure";
}

TEST(RestartPolicy, TheBackoffGrowsWithFailuresInARow) {
  RestartPolicy p;
  p.max_infra_restarts = 10;
  p.max_user_restarts = 10;
  p.backoff = {10, 600, 2};
  EXPECT_EQ(decide_after_exit(p, 1, 0, ExitCause::node_lost).delay_ms, 0) << "none for the first";
  EXPECT_EQ(decide_after_exit(p, 2, 0, ExitCause::node_lost).delay_ms, 10000);
  EXPECT_EQ(decide_after_exit(p, 3, 0, ExitCause::node_lost).delay_ms, 20000);
  EXPECT_EQ(decide_after_exit(p, 5, 0, ExitCause::node_lost).delay_ms, 80000);
  EXPECT_EQ(decide_after_exit(p, 9, 0, ExitCause::node_lost).delay_ms, 600000) << "the cap";
  EXPECT_EQ(decide_after_exit(p, 1, 0, ExitCause::user_error).delay_ms, 10000)
      << "a crash loop waits from the first";
  EXPECT_EQ(decide_after_exit(p, 3, 2, ExitCause::user_error).delay_ms, 40000);
}

std::vector<EndedAttempt> history(std::initializer_list<std::pair<ExitCause, bool>> attempts) {
  std::vector<EndedAttempt> out;
  for (const auto& [cause, progress] : attempts) out.push_back({cause, progress});
  return out;
}

TEST(RestartPolicy, AStreakIsTheFailuresOfOneKindSinceTheLastProgress) {
  using C = ExitCause;
  EXPECT_EQ(failure_streak(history({{C::node_lost, false}})), 1);
  EXPECT_EQ(failure_streak(history({{C::node_lost, false}, {C::site_down, false}})), 2);
  EXPECT_EQ(failure_streak(history({{C::node_lost, true}, {C::site_down, false}})), 2)
      << "the attempt that made progress and then failed is the first of the streak";
  EXPECT_EQ(failure_streak(history({{C::node_lost, false}, {C::site_down, true}})), 1);
  EXPECT_EQ(failure_streak(history({{C::user_error, false}, {C::node_lost, false}})), 1)
      << "another kind breaks the streak";
  EXPECT_EQ(failure_streak(history(
                {{C::node_lost, false}, {C::priority_preempted, false}, {C::node_lost, false}})),
            2)
      << "a preemption spends nothing and is passed over";
  EXPECT_EQ(failure_streak(history(
                {{C::node_lost, false}, {C::priority_preempted, true}, {C::node_lost, false}})),
            1);
}

TEST(RestartHistory, ProgressIsANewerCheckpointOrAHealthyStretch) {
  AttemptRow a1, a2, a3;
  a1.id = 1;
  a1.started_ms = 0;
  a1.ended_ms = 1000;
  a2.id = 2;
  a2.resumed_from_step = 10;  // a1 saved step 10
  a2.started_ms = 2000;
  a2.ended_ms = 3000;
  a3.id = 3;
  a3.resumed_from_step = 10;  // a2 saved nothing newer
  a3.started_ms = 4000;
  a3.ended_ms = 4000 + 1800 * 1000;  // but ran its healthy stretch
  CheckpointRow latest;
  latest.attempt_id = 2;
  latest.step = 10;
  auto h = restart_history({a1, a2, a3}, latest, 1800, 0);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_TRUE(h[0].made_progress);
  EXPECT_FALSE(h[1].made_progress);
  EXPECT_TRUE(h[2].made_progress);
  latest.attempt_id = 3;
  latest.step = 20;
  a3.ended_ms = 5000;
  EXPECT_TRUE(restart_history({a1, a2, a3}, latest, 1800, 0)[2].made_progress)
      << "the last attempt's own newer checkpoint";
  latest.step = 10;
  EXPECT_FALSE(restart_history({a1, a2, a3}, latest, 1800, 0)[2].made_progress);
}

AttemptRow ran(std::int64_t first, std::int64_t last, double seconds, Millis start, Millis end) {
  AttemptRow a;
  a.first_step = first;
  a.last_step = last;
  a.step_time_total = seconds;
  a.started_ms = start;
  a.ended_ms = end;
  return a;
}

TEST(JobStats, StepsLostArePastTheResumedCheckpoint) {
  EXPECT_EQ(steps_lost_between(ran(1, 47, 0, 0, 0), 40), 7);
  EXPECT_EQ(steps_lost_between(ran(1, 47, 0, 0, 0), std::nullopt), 47);
  EXPECT_EQ(steps_lost_between(ran(41, 47, 0, 0, 0), 40), 7);
  EXPECT_EQ(steps_lost_between(ran(41, 47, 0, 0, 0), 50), 0);
  AttemptRow never;
  EXPECT_EQ(steps_lost_between(never, 10), 0);
}

TEST(JobStats, EttrCountsOnlyKeptStepTimeOverWallClock) {
  // Attempt 1: steps 1..50 in 50 s, 10 of them lost. Attempt 2: 41..100 in 60 s.
  // Wall clock: 0 .. 200 s. Productive: 40 + 60 = 100 s -> 50%.
  AttemptRow a1 = ran(1, 50, 50, 0, 80'000);
  a1.steps_lost = 10;
  AttemptRow a2 = ran(41, 100, 60, 90'000, 200'000);
  JobStats s = compute_job_stats({a1, a2}, 999'999);
  EXPECT_EQ(s.steps_lost, 10);
  ASSERT_TRUE(s.ettr.has_value());
  EXPECT_NEAR(*s.ettr, 0.5, 1e-9);
}

TEST(JobStats, RunningJobMeasuresWallClockUntilNow) {
  AttemptRow a = ran(1, 10, 10, 0, 0);
  a.ended_ms.reset();
  JobStats s = compute_job_stats({a}, 20'000);
  EXPECT_NEAR(*s.ettr, 0.5, 1e-9);
}

TEST(JobStats, WallClockRunsUntilNowWhileAnOlderAttemptStillRuns) {
  // Attempt 1 was reinstated (no end) after attempt 2, its duplicate, was cancelled.
  AttemptRow a1 = ran(1, 10, 10, 0, 0);
  a1.ended_ms.reset();
  AttemptRow a2 = ran(5, 6, 0, 5'000, 8'000);
  JobStats s = compute_job_stats({a1, a2}, 20'000);
  ASSERT_TRUE(s.wall_s.has_value());
  EXPECT_NEAR(*s.wall_s, 20.0, 1e-9);
}

}  // namespace
}  // namespace orch
