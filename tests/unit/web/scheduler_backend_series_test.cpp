// The real backend's series (GET /api/v1/jobs/{id}/series) over a store the brain wrote: the
// points of the whole answer never pass max_points however many steps and attempts, shared by
// the attempts' buckets; a single step's loss spike survives the merge; progress lines the brain
// takes in become points; checkpoints mark the series.
#include <gtest/gtest.h>

#include "scheduler/brain/brain.h"
#include "tests/harness/builders.h"
#include "tests/unit/web/backend_fixture.h"
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using nlohmann::json;
using testing::make_cluster;
using testing::make_job;

constexpr Millis kStart = 1'700'000'000'000;

class SchedulerBackendSeriesTest : public BackendFixture {
 protected:
  void SetUp() override {
    clock_.set_ms(kStart);
    open({make_cluster("alpha")});
    handle(InventoryObserved{"alpha", {{{"a1", 4, true, ""}}}});
  }

  // A job written straight to the store (no brain): attempts are added by add_attempt.
  JobId add_job() {
    JobRow j;
    j.name = "long";
    j.spec = make_job();
    j.created_ms = j.updated_ms = kStart;
    return store_->insert_job(j).value();
  }

  // Attempt `no` of job with steps first..last (loss 2, a spike of 40 at `spike`), ended unless
  // it is the last one, resumed from first - 1 when it is not the first.
  AttemptId add_attempt(JobId job, int no, std::int64_t first, std::int64_t last,
                        std::int64_t spike = -1) {
    AttemptRow a;
    a.job_id = job;
    a.no = no;
    a.cluster = "alpha";
    a.token = "orch-" + std::to_string(job) + "-" + std::to_string(no);
    a.started_ms = kStart + first * 1000;
    if (no > 1) a.resumed_from_step = first - 1;
    const AttemptId id = store_->insert_attempt(a).value();
    auto r = store_->transaction([&]() -> Result<void> {
      for (std::int64_t s = first; s <= last; ++s) {
        SeriesStep step{s, s == spike ? 40.0 : 2.0, 4096, 0.5, 0.4, kStart + s * 1000};
        if (auto w = store_->add_series_step(id, first, step); !w) return w;
      }
      return Ok{};
    });
    EXPECT_TRUE(r.ok()) << r.error().message;
    return id;
  }

  json series(JobId job, int points) {
    auto r = backend_->job_series(job, points);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r ? json::parse(r->text) : json::object();
  }

  static std::size_t total_points(const json& s) {
    std::size_t n = 0;
    for (const json& a : s["attempts"]) n += a["points"].size();
    return n;
  }
};

TEST_F(SchedulerBackendSeriesTest, PointsNeverPassTheCapAcrossTwoAttempts) {
  const JobId job = add_job();
  add_attempt(job, 1, 1, 30'000, 12'345);
  add_attempt(job, 2, 25'001, 90'000);
  for (int cap : {10, 11, 100, 999, 2000, 10000}) {
    const json s = series(job, cap);
    EXPECT_EQ(s["max_points"], cap);
    EXPECT_LE(total_points(s), static_cast<std::size_t>(cap)) << cap;
    ASSERT_EQ(s["attempts"].size(), 2u);
    const json& first = s["attempts"][0]["points"];
    const json& second = s["attempts"][1]["points"];
    ASSERT_FALSE(first.empty()) << cap;
    ASSERT_FALSE(second.empty()) << cap;
    EXPECT_GE(total_points(s), static_cast<std::size_t>(std::min(cap, 1000)) * 9 / 10)
        << cap << ": the cap is used, not wasted";
    EXPECT_EQ(first.front()["first_step"], 1);
    EXPECT_EQ(first.back()["last_step"], 30'000);
    EXPECT_EQ(second.front()["first_step"], 25'001);
    EXPECT_EQ(second.back()["step"], 90'000);
    double highest = 0;
    for (const json& p : first) highest = std::max(highest, p["loss_max"].get<double>());
    EXPECT_EQ(highest, 40.0) << cap << ": the spike at one step survives";
  }
  const json s = series(job, 100);
  EXPECT_EQ(s["attempts"][0]["attempt"], 1);
  EXPECT_EQ(s["attempts"][1]["attempt"], 2);
  EXPECT_EQ(s["attempts"][1]["resumed_from_step"], 25'000);
  EXPECT_EQ(s["attempts"][0]["resumed_from_step"], nullptr);
  EXPECT_EQ(s["attempts"][0]["cluster"], "alpha");
  EXPECT_EQ(s["attempts"][1]["started_ms"], kStart + 25'001'000);
}

// The acceptance case: a 1,000,000-step job answers with at most the default 2,000 points, its
// one-step loss spike among them (bench/bench_series.cpp times it: about 3 ms in Release).
TEST_F(SchedulerBackendSeriesTest, AMillionStepJobAnswersWithinTheCapKeepingItsSpike) {
  const JobId job = add_job();
  add_attempt(job, 1, 1, 1'000'000, 777'777);
  const json s = series(job, kDefaultSeriesPoints);
  EXPECT_LE(total_points(s), static_cast<std::size_t>(kDefaultSeriesPoints));
  const json& p = s["attempts"][0]["points"];
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p.back()["step"], 1'000'000);
  int spikes = 0;
  for (const json& point : p) {
    const bool holds = point["first_step"] <= 777'777 && 777'777 <= point["last_step"];
    EXPECT_EQ(point["loss_max"].get<double>(), holds ? 40.0 : 2.0) << point.dump();
    spikes += holds ? 1 : 0;
  }
  EXPECT_EQ(spikes, 1);
}

TEST_F(SchedulerBackendSeriesTest, AShortRunIsEveryStepAsItWasReported) {
  const JobId job = add_job();
  const AttemptId attempt = add_attempt(job, 1, 1, 5, 3);
  ASSERT_TRUE(store_->insert_checkpoint({0, job, attempt, 4, "/ckpt/4", 1.0, kStart + 4500}).ok());
  const json s = series(job, 2000);
  const json& p = s["attempts"][0]["points"];
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[2], json({{"step", 3},
                        {"first_step", 3},
                        {"last_step", 3},
                        {"at_ms", kStart + 3000},
                        {"loss", 40.0},
                        {"loss_min", 40.0},
                        {"loss_max", 40.0},
                        {"tokens_per_s", 8192.0},
                        {"step_time_s", 0.5},
                        {"mfu", 0.4}}));
  EXPECT_EQ(s["checkpoints"], json({{{"step", 4}, {"attempt", 1}, {"at_ms", kStart + 4500}}}));
}

TEST_F(SchedulerBackendSeriesTest, BadPointsAreInvalidAndAnUnknownJobNotFound) {
  const JobId job = add_job();
  EXPECT_EQ(backend_->job_series(job, 9).error().kind, ErrorKind::invalid);
  EXPECT_EQ(backend_->job_series(job, 10001).error().kind, ErrorKind::invalid);
  EXPECT_EQ(backend_->job_series(999, 2000).error().kind, ErrorKind::not_found);
  const json empty = series(job, 2000);
  EXPECT_EQ(empty["attempts"], json::array());
  EXPECT_EQ(empty["checkpoints"], json::array());
}

TEST_F(SchedulerBackendSeriesTest, ProgressLinesTheBrainTakesInArePoints) {
  auto submitted = brain_->handle(SubmitJob{make_job().nodes(1).gpus(4).on({"alpha"})});
  ASSERT_TRUE(submitted.ok());
  OutboxRow launch = store_->pending_actions("alpha").value().at(0);
  handle(LaunchCompleted{launch.id, launch.token, LaunchResult{"77", {"a1"}}, false});
  std::vector<ProgressLine> reports = {ProgressReport{1, 4096, 0.5, 2.5, {}},
                                       ProgressReport{2, 4096, 0.25, 2.25, {}},
                                       ProgressReport{2, 4096, 0.25, 9.0, {}}};
  handle(AttemptObserved{
      "alpha", launch.token, RunPhase::running, std::nullopt, {"a1"}, reports, {}, {}});
  const json s = series(submitted->job_id, 2000);
  ASSERT_EQ(s["attempts"].size(), 1u);
  const json& p = s["attempts"][0]["points"];
  ASSERT_EQ(p.size(), 2u) << "a step seen twice counts once: " << s.dump();
  EXPECT_EQ(p[0]["loss"], 2.5);
  EXPECT_EQ(p[1]["loss"], 2.25);
  EXPECT_EQ(p[1]["tokens_per_s"], 4096 / 0.25);
  EXPECT_EQ(p[1]["at_ms"], kStart);
}

TEST(ShareSeriesPoints, AllBucketsWhenTheyFitElseSharesThatNeverPassTheCap) {
  EXPECT_EQ(share_series_points({300, 200}, 2000), (std::vector<std::int64_t>{300, 200}));
  const auto shares = share_series_points({2000, 1000}, 100);
  EXPECT_EQ(shares, (std::vector<std::int64_t>{67, 33}));
  // More attempts than points: each gets one while any are left, the rest none.
  const std::vector<std::int64_t> many(15, 2000);
  const auto few = share_series_points(many, 10);
  std::int64_t sum = 0;
  for (auto s : few) sum += s;
  EXPECT_EQ(sum, 10);
  EXPECT_EQ(few[0], 1);
  EXPECT_EQ(few[14], 0);
  // A tiny attempt beside a long one still gets a point.
  const auto small = share_series_points({2000, 1}, 10);
  EXPECT_EQ(small, (std::vector<std::int64_t>{9, 1}));
}

}  // namespace
}  // namespace orch
