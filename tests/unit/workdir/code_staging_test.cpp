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
  auto sim = workdir_refusal(job, cluster_of("sim"));
  ASSERT_TRUE(sim);
  EXPECT_NE(sim->find("provider sim"), std::string::npos);
  EXPECT_EQ(WorkdirFilter().name(), "workdir");
}

PodVolume volume(const std::string& name, const std::string& mount, bool read_only = false) {
  PodVolume v;
  v.name = name;
  v.claim = name + "-claim";
  v.mount = mount;
  v.read_only = read_only;
  return v;
}

TEST(WorkdirFilter, KubernetesTakesCodeWhenItsStorageRootIsOnOneOfItsWritableVolumes) {
  JobSpec job;
  job.workdir.sha256 = kA;
  ClusterSpec kube = cluster_of("kubernetes");
  kube.kubernetes.pod.volumes = {volume("data", "/data"), volume("shared", "/mnt/shared")};
  kube.storage_root = "/mnt/shared/orch";
  EXPECT_FALSE(workdir_refusal(job, kube));
  kube.storage_root = "/mnt/shared";
  EXPECT_FALSE(workdir_refusal(job, kube));
}

TEST(WorkdirFilter, KubernetesWithoutItsStorageRootOnAVolumeSaysWhy) {
  JobSpec job;
  job.workdir.sha256 = kA;
  ClusterSpec kube = cluster_of("kubernetes");
  auto none = workdir_refusal(job, kube);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none,
            "its workdir cannot be staged to Kubernetes cluster kubernetes-1: the cluster has no "
            "storage.root (a directory on one of its kubernetes.volumes)");
  kube.kubernetes.pod.volumes = {volume("data", "/data"), volume("ro", "/mnt/ro", true)};
  kube.storage_root = "/datasets/orch";  // "/data" is a prefix of the text, not of the path
  auto off = workdir_refusal(job, kube);
  ASSERT_TRUE(off);
  EXPECT_EQ(*off,
            "its workdir cannot be staged to Kubernetes cluster kubernetes-1: its storage.root "
            "/datasets/orch is on none of its writable kubernetes.volumes (/data)");
  kube.storage_root = "/mnt/ro/orch";  // a read-only volume cannot take the code
  EXPECT_TRUE(workdir_refusal(job, kube));
}

TEST(WorkdirFilter, ASetupWithoutCodeNeedsTheStorageRootOnAVolumeOnKubernetesOnly) {
  JobSpec job;
  job.setup = "pip install -r requirements.txt";
  EXPECT_FALSE(workdir_refusal(job, cluster_of("local")));
  ClusterSpec kube = cluster_of("kubernetes");
  auto why = workdir_refusal(job, kube);
  ASSERT_TRUE(why);
  EXPECT_EQ(why->rfind("its setup cannot run on Kubernetes cluster kubernetes-1: ", 0), 0u) << *why;
  kube.kubernetes.pod.volumes = {volume("data", "/data")};
  kube.storage_root = "/data/orch";
  EXPECT_FALSE(workdir_refusal(job, kube));
}

TEST(WorkdirFilter, AJobWithoutCodeGoesAnywhere) {
  EXPECT_FALSE(workdir_refusal(JobSpec{}, cluster_of("kubernetes")));
}

}  // namespace
}  // namespace orch
