// Staging a job's code to a site and pruning old code (scheduler/data/code_staging.h).
#include "scheduler/data/code_staging.h"
#include "scheduler/placement/workdir_filter.h"

#include <gtest/gtest.h>

namespace orch {
namespace {

const std::string kA(64, 'a');
const std::string kB(64, 'b');
constexpr Millis kDay = 24LL * 3600 * 1000;

TEST(NextCodeStep, NoCopyYetStartsOne) {
  EXPECT_EQ(next_code_step(std::nullopt), CodeStep::start);
}

TEST(NextCodeStep, ACopyDoneThereIsReady) {
  EXPECT_EQ(next_code_step(CodeCopy{4, TransferState::done, ""}), CodeStep::ready);
}

TEST(NextCodeStep, ACopyUnderWayIsWaitedFor) {
  for (auto s : {TransferState::queued, TransferState::running, TransferState::verifying}) {
    EXPECT_EQ(next_code_step(CodeCopy{4, s, ""}), CodeStep::wait);
  }
}

TEST(NextCodeStep, AFailedOrCancelledCopyIsStartedAgain) {
  EXPECT_EQ(next_code_step(CodeCopy{4, TransferState::failed, "rsync: no space"}), CodeStep::start);
  EXPECT_EQ(next_code_step(CodeCopy{4, TransferState::cancelled, ""}), CodeStep::start);
}

TEST(CodeToPrune, KeepsCodeALiveJobNamesEverywhere) {
  const std::vector<CodeCopyHeld> held = {
      {kA, "alpha", 0}, {kA, "beta", 0}, {kA, std::string(kCodeStoreSite), 0}};
  const std::vector<CodeUse> uses = {{kA, true, std::nullopt}};
  EXPECT_TRUE(code_to_prune(held, uses, 30 * kDay, 7 * kDay).empty());
}

TEST(CodeToPrune, KeepsCodeOfAJobEndedRecently) {
  const std::vector<CodeCopyHeld> held = {{kA, "alpha", 0}};
  EXPECT_TRUE(code_to_prune(held, {{kA, false, 29 * kDay}}, 30 * kDay, 7 * kDay).empty());
}

TEST(CodeToPrune, PrunesCodeNoJobUsedForLong) {
  const std::vector<CodeCopyHeld> held = {
      {kA, "alpha", 0}, {kB, "alpha", 0}, {kB, std::string(kCodeStoreSite), 0}};
  const std::vector<CodeUse> uses = {{kA, true, std::nullopt}, {kB, false, 1 * kDay}};
  auto out = code_to_prune(held, uses, 30 * kDay, 7 * kDay);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_EQ(out[0].sha256, kB);
  EXPECT_EQ(out[0].cluster, "alpha");
  EXPECT_EQ(out[1].cluster, kCodeStoreSite);
}

TEST(CodeToPrune, KeepsACopyStagedRecentlyEvenUnused) {
  // Staged for a job that was just submitted and is not stored yet as a user of it.
  const std::vector<CodeCopyHeld> held = {{kB, "alpha", 29 * kDay}};
  EXPECT_TRUE(code_to_prune(held, {}, 30 * kDay, 7 * kDay).empty());
}

}  // namespace
}  // namespace orch

namespace orch {
namespace {

ClusterSpec cluster_of(const std::string& provider) {
  ClusterSpec c;
  c.name = provider + "-1";
  c.provider = provider;
  return c;
}

TEST(WorkdirFilter, AJobWithCodeGoesOnlyWhereItCanBeStaged) {
  JobSpec job;
  job.workdir.sha256 = kA;
  EXPECT_FALSE(workdir_refusal(job, cluster_of("local")));
  EXPECT_FALSE(workdir_refusal(job, cluster_of("slurm")));
  auto kube = workdir_refusal(job, cluster_of("kubernetes"));
  ASSERT_TRUE(kube);
  EXPECT_NE(kube->find("provider kubernetes"), std::string::npos);
  EXPECT_EQ(WorkdirFilter().name(), "workdir");
}

TEST(WorkdirFilter, AJobWithoutCodeGoesAnywhere) {
  EXPECT_FALSE(workdir_refusal(JobSpec{}, cluster_of("kubernetes")));
}

}  // namespace
}  // namespace orch
