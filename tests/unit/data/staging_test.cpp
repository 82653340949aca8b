// Staging math, transfer retries, audit samples and resume candidates (staging.h).
#include "scheduler/data/staging.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace orch {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr std::int64_t kMiB = 1 << 20;
constexpr std::int64_t kGB = 1'000'000'000;

TEST(EstimateBandwidth, MedianOfTheCopies) {
  EXPECT_DOUBLE_EQ(estimate_bandwidth({{100 * kMiB, 1}, {100 * kMiB, 4}, {100 * kMiB, 2}}),
                   50.0 * kMiB);
  EXPECT_DOUBLE_EQ(estimate_bandwidth({{100 * kMiB, 1}, {100 * kMiB, 2}}), 75.0 * kMiB);
}

TEST(EstimateBandwidth, SmallOrInstantCopiesAreIgnoredAndThePriorStands) {
  EXPECT_DOUBLE_EQ(estimate_bandwidth({}), 100e6);
  EXPECT_DOUBLE_EQ(estimate_bandwidth({{kMiB - 1, 0.001}, {10 * kMiB, 0}}, 42), 42);
  EXPECT_DOUBLE_EQ(estimate_bandwidth({{kMiB - 1, 0.001}, {kMiB, 1}}), kMiB);
}

TEST(Staging, SecondsAreBytesOverBandwidth) {
  EXPECT_DOUBLE_EQ(staging_seconds(10 * kGB, 100e6), 100);
  EXPECT_EQ(staging_seconds(0, 0), 0);
  EXPECT_TRUE(std::isinf(staging_seconds(1, 0)));
}

TEST(Staging, FactorIsTheShareOfTheHorizonLeft) {
  EXPECT_DOUBLE_EQ(staging_factor(0), 1.0);
  EXPECT_DOUBLE_EQ(staging_factor(86400), 0.5);  // a day to stage, a day's horizon
  EXPECT_DOUBLE_EQ(staging_factor(3600, 3 * 3600), 0.75);
  // 10 TB at 1 GB/s is 10,000 s: about 90% of a day's goodput remains.
  EXPECT_NEAR(staging_factor(staging_seconds(10'000 * kGB, 1e9)), 86400.0 / 96400.0, 1e-12);
  EXPECT_EQ(staging_factor(staging_seconds(1, 0)), 0.0);
}

TEST(DatasetEnv, UpperCaseWithEveryOtherCharacterAnUnderscore) {
  EXPECT_EQ(dataset_env_name("imagenet"), "ORCH_DATASET_IMAGENET");
  EXPECT_EQ(dataset_env_name("c4-en.v2_x"), "ORCH_DATASET_C4_EN_V2_X");
}

TEST(TransferRetry, FiveSecondsDoublingToFiveMinutes) {
  std::vector<Millis> delays;
  for (int tries = 0; tries <= kTransferMaxTries; ++tries) {
    delays.push_back(transfer_retry_delay_ms(tries));
  }
  EXPECT_THAT(delays,
              ElementsAre(0, 5'000, 10'000, 20'000, 40'000, 80'000, 160'000, 300'000, 300'000));
  EXPECT_EQ(transfer_retry_delay_ms(1000), 300'000);
  EXPECT_EQ(kTransferMaxTries, 8);
}

Manifest three_hashed_files() {
  const std::string h(64, 'a');
  return Manifest{true, {{"a", 1, h}, {"b", 2, ""}, {"c", 3, h}, {"d", 4, h}}};
}

TEST(AuditSample, OneHashedFilePerRoundRotating) {
  const Manifest m = three_hashed_files();
  std::vector<std::string> seen;
  for (int round = 0; round < 6; ++round) {
    auto sample = audit_sample(m, round);
    ASSERT_EQ(sample.size(), 1u);
    seen.push_back(sample[0]);
  }
  EXPECT_THAT(seen, ElementsAre("a", "c", "d", "a", "c", "d"));  // "b" has no hash to check
}

TEST(AuditSample, NothingToHashGivesAnEmptySample) {
  EXPECT_THAT(audit_sample(Manifest{}, 3), IsEmpty());
  EXPECT_THAT(audit_sample(Manifest{true, {{"a", 1, ""}}}, 0), IsEmpty());
  EXPECT_THAT(audit_sample(Manifest{false, {{"", 1, std::string(64, 'b')}}}, 7), ElementsAre(""));
}

CheckpointCopy copy(std::int64_t id, std::int64_t step, std::string cluster, bool verified) {
  CheckpointCopy c;
  c.checkpoint_id = id;
  c.step = step;
  c.cluster = std::move(cluster);
  c.path = "/ckpt/step-" + std::to_string(step);
  c.verified = verified;
  c.manifest = Manifest{false, {{"", static_cast<std::uint64_t>(step), ""}}};
  return c;
}

std::vector<std::int64_t> steps(const std::vector<ResumeCandidate>& cs) {
  std::vector<std::int64_t> out;
  for (const ResumeCandidate& c : cs) out.push_back(c.step);
  return out;
}

TEST(ResumeCandidates, VerifiedCopiesAtTheClusterNewestFirst) {
  std::vector<CheckpointCopy> copies = {
      copy(1, 100, "alpha", true), copy(3, 300, "alpha", true),
      copy(2, 200, "alpha", true), copy(4, 400, "alpha", false),  // not verified: never a candidate
      copy(5, 500, "beta", true),                                 // elsewhere
  };
  auto cs = resume_candidates(copies, "alpha");
  EXPECT_THAT(steps(cs), ElementsAre(300, 200, 100));
  EXPECT_EQ(cs[0].checkpoint_id, 3);
  EXPECT_EQ(cs[0].path, "/ckpt/step-300");
  EXPECT_EQ(cs[0].manifest.files.at(0).size, 300u);
}

TEST(ResumeCandidates, AtMostTheLimit) {
  std::vector<CheckpointCopy> copies;
  for (int i = 1; i <= 5; ++i) copies.push_back(copy(i, i * 10, "alpha", true));
  EXPECT_THAT(steps(resume_candidates(copies, "alpha")), ElementsAre(50, 40, 30));
  EXPECT_THAT(steps(resume_candidates(copies, "alpha", 1)), ElementsAre(50));
  EXPECT_THAT(resume_candidates(copies, "alpha", 0), IsEmpty());
  EXPECT_THAT(resume_candidates(copies, "gamma"), IsEmpty());
}

// Tiered checkpoints: a node's own copy of a step comes before the shared copy of the same step
// (the shared one is next if the node's fails its check), and the limit counts checkpoints.
TEST(ResumeCandidates, ANodesOwnCopyComesFirstThenTheSharedCopyOfTheSameStep) {
  CheckpointCopy local = copy(8, 800, "alpha", true);
  local.node = "a1";
  local.path = "/local/job-1/step-800";
  CheckpointCopy lost = copy(9, 900, "alpha", false);  // its node was lost: marked missing
  lost.node = "a2";
  std::vector<CheckpointCopy> copies = {copy(8, 800, "alpha", true),
                                        local,
                                        lost,
                                        copy(7, 700, "alpha", true),
                                        copy(6, 600, "alpha", true),
                                        copy(5, 500, "alpha", true)};
  auto cs = resume_candidates(copies, "alpha");
  EXPECT_THAT(steps(cs), ElementsAre(800, 800, 700, 600));
  EXPECT_EQ(cs[0].node, "a1");
  EXPECT_EQ(cs[0].path, "/local/job-1/step-800");
  EXPECT_EQ(cs[1].node, "");
  EXPECT_EQ(cs[1].path, "/ckpt/step-800");
}

TEST(ResumeCandidates, OneCandidatePerCheckpoint) {
  std::vector<CheckpointCopy> copies = {copy(7, 700, "alpha", true), copy(7, 700, "alpha", true),
                                        copy(6, 600, "alpha", true)};
  EXPECT_THAT(steps(resume_candidates(copies, "alpha")), ElementsAre(700, 600));
}

TEST(ResumeWeighing, ASmallCopyBeatsRedoingAndSetsTheFloorAtTheNewerStep) {
  // 60 steps at 0.4 s = 24 s to redo; 12 MB at 100 MB/s = 0.12 s to copy.
  ResumeWeighing w = weigh_resume(140, 200, 0.4, 12'000'000, 100e6);
  EXPECT_DOUBLE_EQ(w.redo_s, 24.0);
  EXPECT_DOUBLE_EQ(w.copy_s, 0.12);
  EXPECT_TRUE(w.stage);
  EXPECT_EQ(w.floor_step, 200);  // not even one step (0.4 s) is cheaper than the copy
  EXPECT_EQ(describe_weighing(w),
            "resuming from step 140 redoes 60 steps (~24 s at 0.40 s/step); copying step 200 "
            "(12.0 MB) takes ~0.1 s");
}

TEST(ResumeWeighing, AHugeCopyOverASlowLinkLosesToRedoing) {
  // 100 GB at 1 MB/s = 100000 s; 60 steps at 0.4 s = 24 s.
  ResumeWeighing w = weigh_resume(140, 200, 0.4, 100'000'000'000LL, 1e6);
  EXPECT_FALSE(w.stage);
  EXPECT_EQ(w.floor_step, 0);  // every older step loses less than the copy
}

TEST(ResumeWeighing, TheFloorIsWhereRedoingCostsTheCopy) {
  // 10 s to copy at 0.5 s a step: 20 steps are worth redoing, 21 are not.
  ResumeWeighing w = weigh_resume(150, 200, 0.5, 1'000'000'000, 100e6);
  EXPECT_DOUBLE_EQ(w.copy_s, 10.0);
  EXPECT_EQ(w.floor_step, 180);
  EXPECT_TRUE(w.stage);                                                   // from 150: 25 s to redo
  EXPECT_FALSE(weigh_resume(185, 200, 0.5, 1'000'000'000, 100e6).stage);  // 7.5 s to redo
}

TEST(ResumeWeighing, WithoutAStepTimeTheNewerCopyIsStaged) {
  ResumeWeighing w = weigh_resume(-1, 200, std::nullopt, 1'000'000'000, 100e6);
  EXPECT_EQ(w.local_step, 0);
  EXPECT_TRUE(w.stage);
  EXPECT_EQ(w.floor_step, 200);
  EXPECT_THAT(describe_weighing(w), ::testing::StartsWith("starting over redoes 200 steps (no "
                                                          "step time measured yet)"));
  EXPECT_FALSE(weigh_resume(200, 200, std::nullopt, 1, 100e6).stage) << "nothing newer";
}

}  // namespace
}  // namespace orch
