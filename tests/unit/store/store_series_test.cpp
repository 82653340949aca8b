// The run as a series in the store (store_series.cpp): every step its own bucket below the cap;
// past it the buckets merge pairwise, keeping the steps' bounds, a single step's loss spike,
// tokens/s and MFU as totals over time; the cost of a step stays flat and a read never sees more
// than the cap's rows.
#include <gmock/gmock.h>

#include <cmath>
#include <limits>

#include "scheduler/store/store.h"
#include "tests/harness/builders.h"
#include "tests/unit/store/store_rows.h"

namespace orch {
namespace {

constexpr Millis kStart = 1'700'000'000'000;

class StoreSeriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store = std::move(Store::open(":memory:").value());
    job = store->insert_job(testing::new_job_row(kStart)).value();
    attempt = add_attempt(1);
  }

  AttemptId add_attempt(int no) {
    AttemptRow a;
    a.job_id = job;
    a.no = no;
    a.cluster = "alpha";
    a.token = "orch-" + std::to_string(job) + "-" + std::to_string(no);
    a.started_ms = kStart;
    return store->insert_attempt(a).value();
  }

  // Steps first..last of `to`, each with loss(step), 4096 tokens, step time(step) and MFU
  // mfu(step), one second apart, in one transaction as the brain writes an observation's lines.
  template <typename Loss, typename Time, typename Mfu>
  void add_steps(AttemptId to, std::int64_t first, std::int64_t last, Loss loss, Time time,
                 Mfu mfu) {
    auto r = store->transaction([&]() -> Result<void> {
      for (std::int64_t s = first; s <= last; ++s) {
        SeriesStep step{s, loss(s), 4096, time(s), mfu(s), kStart + s * 1000};
        if (auto w = store->add_series_step(to, first, step); !w) return w;
      }
      return Ok{};
    });
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  SeriesSpan span() {
    auto spans = store->series_spans(job).value();
    EXPECT_EQ(spans.size(), 1u);
    return spans.empty() ? SeriesSpan{} : spans[0];
  }

  std::vector<SeriesPoint> points(std::int64_t group) {
    const SeriesSpan s = span();
    return store->series_points(attempt, s.first_bucket, group).value();
  }

  std::unique_ptr<Store> store;
  JobId job = 0;
  AttemptId attempt = 0;
};

auto constant(double v) {
  return [v](std::int64_t) { return std::optional<double>(v); };
}

TEST_F(StoreSeriesTest, BelowTheCapEveryStepIsItsOwnPointWithItsExactFigures) {
  add_steps(
      attempt, 101, 110, [](std::int64_t s) { return std::optional<double>(3.0 - s * 0.01); },
      constant(0.25), constant(0.4));
  EXPECT_EQ(span().width, 1);
  const auto p = points(1);
  ASSERT_EQ(p.size(), 10u);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const std::int64_t step = 101 + static_cast<std::int64_t>(i);
    EXPECT_EQ(p[i].first_step, step);
    EXPECT_EQ(p[i].last_step, step);
    EXPECT_EQ(p[i].steps, 1);
    EXPECT_EQ(p[i].at_ms, kStart + step * 1000);
    EXPECT_DOUBLE_EQ(*p[i].loss, 3.0 - step * 0.01);
    EXPECT_DOUBLE_EQ(*p[i].loss_min, *p[i].loss);
    EXPECT_DOUBLE_EQ(*p[i].loss_max, *p[i].loss);
    EXPECT_DOUBLE_EQ(*p[i].tokens_per_s, 4096 / 0.25);
    EXPECT_DOUBLE_EQ(*p[i].step_time_s, 0.25);
    EXPECT_DOUBLE_EQ(*p[i].mfu, 0.4);
  }
}

TEST_F(StoreSeriesTest, MergedBucketsKeepTheirBoundsAndASingleStepLossSpike) {
  constexpr std::int64_t kSteps = 200'000;
  constexpr std::int64_t kSpike = 123'457;
  add_steps(
      attempt, 1, kSteps,
      [](std::int64_t s) { return std::optional<double>(s == kSpike ? 50 : 2); }, constant(0.5),
      constant(0.4));
  const SeriesSpan s = span();
  EXPECT_GT(s.width, 1);
  EXPECT_EQ(s.width & (s.width - 1), 0) << "the width only ever doubles";
  EXPECT_LE(s.buckets(), kSeriesBucketCap);
  EXPECT_GT(s.buckets(), kSeriesBucketCap / 2) << "merged no further than needed";
  for (std::int64_t group : {std::int64_t{1}, std::int64_t{7}, s.buckets()}) {
    const auto p = points(group);
    ASSERT_FALSE(p.empty());
    EXPECT_LE(static_cast<std::int64_t>(p.size()), (s.buckets() + group - 1) / group);
    EXPECT_EQ(p.front().first_step, 1);
    EXPECT_EQ(p.back().last_step, kSteps);
    std::int64_t steps = 0;
    int spikes = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (i > 0) {
        EXPECT_EQ(p[i].first_step, p[i - 1].last_step + 1) << "no gap, no overlap";
      }
      steps += p[i].steps;
      EXPECT_DOUBLE_EQ(*p[i].loss_min, 2);
      const bool has_spike = p[i].first_step <= kSpike && kSpike <= p[i].last_step;
      EXPECT_DOUBLE_EQ(*p[i].loss_max, has_spike ? 50 : 2) << p[i].first_step;
      spikes += has_spike ? 1 : 0;
      EXPECT_DOUBLE_EQ(*p[i].tokens_per_s, 4096 / 0.5);
    }
    EXPECT_EQ(steps, kSteps);
    EXPECT_EQ(spikes, 1) << "group " << group;
  }
  const auto one = points(s.buckets());
  ASSERT_EQ(one.size(), 1u);
  EXPECT_NEAR(*one[0].loss, 2.0 + 48.0 / kSteps, 1e-12) << "the mean over every step";
}

TEST_F(StoreSeriesTest, ThroughputAndMfuAreTotalsOverTimeNotMeansOfRates) {
  // Uneven steps: 0.1 s at MFU 0.6, then 0.3 s at MFU 0.2, merged into one point.
  add_steps(
      attempt, 1, 2, constant(1.0),
      [](std::int64_t s) { return std::optional<double>(s == 1 ? 0.1 : 0.3); },
      [](std::int64_t s) { return std::optional<double>(s == 1 ? 0.6 : 0.2); });
  const auto p = points(2);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_DOUBLE_EQ(*p[0].tokens_per_s, 8192 / 0.4) << "not the mean of 40960 and 13653";
  EXPECT_DOUBLE_EQ(*p[0].mfu, (0.6 * 0.1 + 0.2 * 0.3) / 0.4) << "not 0.4";
  EXPECT_DOUBLE_EQ(*p[0].step_time_s, 0.2);
}

TEST_F(StoreSeriesTest, WhatAStepDidNotReportIsNullNotZero) {
  auto none = [](std::int64_t) { return std::optional<double>(); };
  add_steps(attempt, 1, 3, none, none, none);
  const auto p = points(1);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_FALSE(p[0].loss || p[0].loss_min || p[0].loss_max);
  EXPECT_FALSE(p[0].tokens_per_s || p[0].step_time_s || p[0].mfu);
}

TEST_F(StoreSeriesTest, NonFiniteAndAbsurdValuesAreLeftOutNotStored) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> losses = {inf, -inf, std::nan(""), 1e300, 3.0};
  add_steps(
      attempt, 1, 5, [&](std::int64_t s) { return std::optional<double>(losses[s - 1]); },
      [&](std::int64_t s) { return std::optional<double>(s == 1 ? inf : 0.5); }, constant(0.4));
  const auto p = points(5);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_DOUBLE_EQ(*p[0].loss, 3.0);
  EXPECT_DOUBLE_EQ(*p[0].loss_max, 3.0);
  EXPECT_DOUBLE_EQ(*p[0].step_time_s, 0.5);
}

TEST_F(StoreSeriesTest, AStepFarAheadWidensTheBucketsInOneMerge) {
  add_steps(attempt, 1, 10, constant(2.0), constant(0.5), constant(0.4));
  auto r = store->transaction([&]() -> Result<void> {
    return store->add_series_step(attempt, 1,
                                  {std::int64_t{1} << 60, 9.0, 4096, 0.5, 0.4, kStart + 99'000});
  });
  ASSERT_TRUE(r.ok()) << r.error().message;
  const SeriesSpan s = span();
  EXPECT_LE(s.buckets(), kSeriesBucketCap);
  const auto p = points(1);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].first_step, 1);
  EXPECT_EQ(p[0].last_step, 10);
  EXPECT_EQ(p[1].last_step, std::int64_t{1} << 60);
  EXPECT_DOUBLE_EQ(*p[1].loss, 9.0);
}

TEST_F(StoreSeriesTest, SpansAreThoseOfTheJobsAttemptsWithStepsInAttemptOrder) {
  const AttemptId second = add_attempt(2);
  add_attempt(3);  // no step yet
  add_steps(second, 500, 520, constant(1.0), constant(0.5), constant(0.4));
  add_steps(attempt, 1, 400, constant(2.0), constant(0.5), constant(0.4));
  const auto spans = store->series_spans(job).value();
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].attempt_id, attempt);
  EXPECT_EQ(spans[0].buckets(), 400);
  EXPECT_EQ(spans[1].attempt_id, second);
  EXPECT_EQ(spans[1].first_bucket, 500);
  EXPECT_EQ(spans[1].buckets(), 21);
}

TEST_F(StoreSeriesTest, CheckpointsOncePerStepAndAttempt) {
  for (const char* path : {"/ckpt/local/100", "/ckpt/100"}) {
    ASSERT_TRUE(store->insert_checkpoint({0, job, attempt, 100, path, 1.0, kStart + 5}).ok());
  }
  ASSERT_TRUE(store->insert_checkpoint({0, job, attempt, 50, "/ckpt/50", 1.0, kStart + 2}).ok());
  const auto marks = store->series_checkpoints(job).value();
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].step, 50);
  EXPECT_EQ(marks[1].step, 100);
  EXPECT_EQ(marks[1].attempt_no, 1);
  EXPECT_EQ(marks[1].at_ms, kStart + 5);
}

// Schema 30 on a database of version 29: its rows per step (progress_samples, never read) go,
// and an attempt running across the upgrade starts its series at width 1.
}  // namespace
}  // namespace orch
