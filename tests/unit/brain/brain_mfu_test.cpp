// MFU through the brain (issue 41): every figure is work over time (the attempt's, its minute's,
// its cluster's as placement and the scorecards read it), and an MFU above 100% is a
// misconfiguration flagged on the job, never a measurement anything counts.
#include <gmock/gmock.h>

#include "scheduler/brain/cluster_history.h"
#include "scheduler/health/scorecard.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;

constexpr Millis kDay = 24LL * 3600 * 1000;

class BrainMfu : public BrainFixture {
 protected:
  void SetUp() override {
    // 1 TFLOP/s per GPU keeps the arithmetic readable.
    clusters = {make_cluster("alpha").peak_tflops(1.0)};
    start(clusters);
  }

  // The cluster as the scorecards (`report providers`) and placement read it.
  std::optional<double> scorecard_mfu(const std::string& cluster) {
    const Millis now = clock.now_ms();
    auto in = gather_scorecard_inputs(*store, clusters, now, now - 7 * kDay);
    EXPECT_TRUE(in.ok());
    for (const auto& card : compute_scorecards(*in)) {
      if (card.name == cluster) return card.mfu;
    }
    return std::nullopt;
  }
  std::optional<double> placement_mfu(const std::string& cluster) {
    auto histories = placement_histories(*store, clusters, clock.now_ms());
    EXPECT_TRUE(histories.ok());
    return (*histories)[cluster].mfu;
  }
  // Where a next job is placed, the goodput's breakdown names the MFU it expects there.
  std::string next_verdict() {
    clock.advance_ms(kHistoryRefreshMs);
    JobId next = submit(make_job().gpus(2));
    auto verdicts = store->verdicts_of(next).value();
    return verdicts.empty() ? "" : verdicts.front().reason;
  }

  std::vector<EventRow> events_of_kind(JobId id, const std::string& kind) {
    std::vector<EventRow> out;
    for (const auto& e : store->events_of(id).value()) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }

  std::vector<ClusterSpec> clusters;
};

// The case: one slowed node of a 3-node gang stretches 11 steps of 27 from 1 s to 4 s.
// 1000 tokens x 8e8 FLOP in 1 s on 2 x 1 TFLOP/s is MFU 0.40 at full speed; the run makes 27
// steps in 60 s where it made them in 27 s: 45% of its speed, MFU 0.18. The mean of the steps'
// MFUs (0.278, 69%) is what a jittery cluster would have been credited with.
TEST_F(BrainMfu, AnUnevenRunsMfuIsItsWorkOverItsTimeEverywhere) {
  JobId id = submit(make_job().gpus(2).flops_per_token(8e8));
  site_launches_all("alpha");
  AttemptRow a = last_attempt(id);
  std::vector<ProgressLine> lines;
  for (int s = 1; s <= 27; ++s) {
    const bool slow = s % 5 == 2 || s % 5 == 4 || s == 27;  // 11 of 27
    lines.push_back(ProgressReport{s, 1000, slow ? 4.0 : 1.0, std::nullopt, {}});
  }
  report(a, lines);

  const double expected = 0.40 * 27 / 60;  // 0.18
  ASSERT_TRUE(last_attempt(id).mfu.has_value());
  EXPECT_NEAR(*last_attempt(id).mfu, expected, 1e-12);
  auto buckets = store->mfu_series(a.id, "", 0).value();
  ASSERT_THAT(buckets, SizeIs(1));
  EXPECT_EQ(buckets[0].samples, 27);
  EXPECT_NEAR(buckets[0].time_s, 60, 1e-9);
  EXPECT_NEAR(buckets[0].mean(), expected, 1e-12);
  EXPECT_NEAR(scorecard_mfu("alpha").value_or(0), expected, 1e-12);
  EXPECT_NEAR(placement_mfu("alpha").value_or(0), expected, 1e-12);
  EXPECT_THAT(next_verdict(), HasSubstr("(mfu 0.18,"));
  EXPECT_THAT(last_attempt(id).mfu_flag, IsEmpty());
}

// The 46,633%: model.parameters ~78 billion for a model that is not. 1000 tokens in
// 0.5 s x 6 x 7.7722e10 FLOP on 2 x 1 TFLOP/s would be MFU 466.33.
TEST_F(BrainMfu, AnMfuAboveOneHundredPercentIsFlaggedAndCountedNowhere) {
  JobSpec spec = make_job().gpus(2);
  spec.model = {};
  spec.model.parameters = 466.33e9 / 6;
  JobId id = submit(spec);
  site_launches_all("alpha");
  AttemptRow a = last_attempt(id);
  train(a, 1, 10, 0, 1000, 0.5);

  AttemptRow flagged = last_attempt(id);
  EXPECT_FALSE(flagged.mfu.has_value());
  EXPECT_THAT(flagged.mfu_flag,
              StartsWith("model size or peak FLOPs misconfigured: MFU 46633% is above 100% "
                         "(model.parameters 7.77e+10: 4.66e+11 FLOP per token; peak 1 TFLOP/s per "
                         "GPU x 2 GPUs on alpha)"));
  auto told = events_of_kind(id, "mfu-misconfigured");
  ASSERT_THAT(told, SizeIs(1));
  EXPECT_EQ(told[0].message, flagged.mfu_flag);

  // More steps: still flagged, not told again, and no step of it in the minute buckets.
  train(a, 11, 20, 0, 1000, 0.5);
  EXPECT_FALSE(last_attempt(id).mfu.has_value());
  EXPECT_EQ(last_attempt(id).mfu_flag, flagged.mfu_flag);
  EXPECT_THAT(events_of_kind(id, "mfu-misconfigured"), SizeIs(1));
  EXPECT_THAT(store->mfu_series(a.id, "", 0).value(), IsEmpty());
  EXPECT_THAT(store->mfu_series(0, "alpha", 0).value(), IsEmpty());

  // Neither `report providers` nor placement counts it: the prior (0.35) stands in.
  EXPECT_EQ(scorecard_mfu("alpha"), std::nullopt);
  EXPECT_EQ(placement_mfu("alpha"), std::nullopt);
  exits(last_attempt(id), 0);
  EXPECT_THAT(next_verdict(), HasSubstr("(mfu 0.35,"));
}

// A step whose own MFU is above 100% (a step time the trainer got wrong) is no measurement: it
// stays out of the minute's bucket and the drop watch, while the attempt's figure, plausible,
// stands and is not flagged.
TEST_F(BrainMfu, AnImplausibleStepIsLeftOutOfTheBucketsOnly) {
  JobId id = submit(make_job().gpus(2).flops_per_token(8e8));
  site_launches_all("alpha");
  AttemptRow a = last_attempt(id);
  std::vector<ProgressLine> lines;
  for (int s = 1; s <= 9; ++s) lines.push_back(ProgressReport{s, 1000, 1.0, std::nullopt, {}});
  lines.push_back(ProgressReport{10, 1000, 0.0001, std::nullopt, {}});  // MFU 4000
  report(a, lines);

  AttemptRow after = last_attempt(id);
  EXPECT_THAT(after.mfu_flag, IsEmpty());
  ASSERT_TRUE(after.mfu.has_value());
  EXPECT_NEAR(*after.mfu, 10 * 1000 * 8e8 / 9.0001 / 2e12, 1e-12);
  auto buckets = store->mfu_series(a.id, "", 0).value();
  ASSERT_THAT(buckets, SizeIs(1));
  EXPECT_EQ(buckets[0].samples, 9);
  EXPECT_NEAR(buckets[0].mean(), 0.40, 1e-12);
}

}  // namespace
}  // namespace orch::testing
