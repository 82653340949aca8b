// What plan_replication copies and deletes for one job's checkpoints (replication_plan.h).
#include "scheduler/data/replication_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace orch {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// --- builders -------------------------------------------------------------------------------

ReplicaView verified(std::string site) {
  return {std::move(site), ReplicaState::verified};
}
ReplicaView present(std::string site) {
  return {std::move(site), ReplicaState::present};
}
ReplicaView copying(std::string site) {
  return {std::move(site), ReplicaState::copying};
}
ReplicaView missing(std::string site) {
  return {std::move(site), ReplicaState::missing};
}
ReplicaView corrupt(std::string site) {
  return {std::move(site), ReplicaState::corrupt};
}
ReplicaView deleted(std::string site) {
  return {std::move(site), ReplicaState::deleted};
}
ReplicaView refused(std::string site) {
  return {std::move(site), ReplicaState::refused};
}

// Checkpoint `id` at step id * 100, saved at `origin`.
CheckpointView ckpt(std::int64_t id, std::string origin, std::vector<ReplicaView> replicas) {
  return CheckpointView{id, id * 100, std::move(origin), std::move(replicas)};
}

ReplicationSpec policy(int keep = 3, int copies = 2, std::string to = "") {
  ReplicationSpec p;
  p.keep = keep;
  p.copies = copies;
  p.to = std::move(to);
  return p;
}

ReplicationInput input(ReplicationSpec p, std::vector<CheckpointView> checkpoints,
                       std::set<std::string> usable = {"alpha", "beta", "gamma"}) {
  ReplicationInput in;
  in.policy = std::move(p);
  in.checkpoints = std::move(checkpoints);
  in.usable_sites = std::move(usable);
  return in;
}

// "id:from->to" and "id@site", so expectations read as one line.
std::vector<std::string> copies(const ReplicationPlan& plan) {
  std::vector<std::string> out;
  for (const PlannedCopy& c : plan.copies) {
    out.push_back(std::to_string(c.checkpoint_id) + ":" + c.from + "->" + c.to);
  }
  return out;
}
std::vector<std::string> deletes(const ReplicationPlan& plan) {
  std::vector<std::string> out;
  for (const PlannedDelete& d : plan.deletes) {
    out.push_back(std::to_string(d.checkpoint_id) + "@" + d.cluster);
  }
  return out;
}

// --- refused copies (issue 37) ---------------------------------------------------------------

TEST(ReplicationPlan, ARefusedCopyIsNeverDeletedNorCopiedOver) {
  // Checkpoint 3 was verified at beta, then its copy at the origin turned out to be a link out
  // of the job's directory: nothing is written there (it would go through the link), and
  // retention of the old checkpoint 1 leaves its refused copy alone.
  const std::vector<CheckpointView> held = {ckpt(1, "alpha", {refused("alpha"), verified("beta")}),
                                            ckpt(3, "alpha", {refused("alpha"), verified("beta")})};
  auto two = plan_replication(input(policy(1, 2), held, {"alpha", "beta"}));
  EXPECT_THAT(copies(two), IsEmpty()) << "no usable site but the refused origin lacks it";
  auto one = plan_replication(input(policy(1, 1), held, {"alpha", "beta"}));
  EXPECT_THAT(deletes(one), ElementsAre("1@beta")) << "never 1@alpha";
}

TEST(ReplicationPlan, ACheckpointWhoseOnlyCopyIsRefusedIsNotUsable) {
  auto plan = plan_replication(input(
      policy(1, 2), {ckpt(1, "alpha", {verified("alpha")}), ckpt(2, "alpha", {refused("alpha")})}));
  EXPECT_THAT(copies(plan), ElementsAre("1:alpha->beta")) << "the newest usable one is 1";
  EXPECT_THAT(deletes(plan), IsEmpty());
}

// --- copies ---------------------------------------------------------------------------------

TEST(ReplicationPlan, NewVerifiedCheckpointIsCopiedToTheNamedSite) {
  auto plan =
      plan_replication(input(policy(3, 2, "gamma"), {ckpt(1, "alpha", {verified("alpha")})}));
  EXPECT_THAT(copies(plan), ElementsAre("1:alpha->gamma"));
  EXPECT_EQ(plan.copies[0].why, "off-site copy (replicate.to)");
  EXPECT_THAT(plan.deletes, IsEmpty());
}

TEST(ReplicationPlan, CheckpointNotYetVerifiedIsNotCopied) {
  auto plan = plan_replication(input(policy(), {ckpt(1, "alpha", {present("alpha")})}));
  EXPECT_THAT(plan.copies, IsEmpty());
  EXPECT_THAT(plan.deletes, IsEmpty());
}

TEST(ReplicationPlan, OnlyTheNewestUsableCheckpointIsReplicated) {
  auto plan = plan_replication(
      input(policy(), {ckpt(1, "alpha", {verified("alpha")}), ckpt(2, "alpha", {verified("alpha")}),
                       ckpt(3, "alpha", {present("alpha")})}));
  EXPECT_THAT(copies(plan), ElementsAre("2:alpha->beta"));
}

TEST(ReplicationPlan, SchedulerChoosesTheFastestMeasuredRoute) {
  auto in = input(policy(), {ckpt(1, "alpha", {verified("alpha")})});
  in.bandwidth[{"alpha", "beta"}] = 50e6;
  in.bandwidth[{"alpha", "gamma"}] = 200e6;
  auto plan = plan_replication(in);
  EXPECT_THAT(copies(plan), ElementsAre("1:alpha->gamma"));
  EXPECT_EQ(plan.copies[0].why, "off-site copy");
}

TEST(ReplicationPlan, MeasuredRoutesBeatUnknownOnesAndTiesGoByName) {
  auto in = input(policy(3, 3), {ckpt(1, "alpha", {verified("alpha")})},
                  {"alpha", "beta", "delta", "gamma"});
  in.bandwidth[{"alpha", "gamma"}] = 10e6;  // slow, but measured
  EXPECT_THAT(copies(plan_replication(in)), ElementsAre("1:alpha->gamma", "1:alpha->beta"));
  in.bandwidth.clear();  // nothing measured: by name
  EXPECT_THAT(copies(plan_replication(in)), ElementsAre("1:alpha->beta", "1:alpha->delta"));
}

TEST(ReplicationPlan, NamedSiteThatIsNotUsableFallsBackToTheScheduler) {
  auto plan = plan_replication(
      input(policy(3, 2, "gamma"), {ckpt(1, "alpha", {verified("alpha")})}, {"alpha", "beta"}));
  EXPECT_THAT(copies(plan), ElementsAre("1:alpha->beta"));
}

TEST(ReplicationPlan, LostOriginCopyIsReReplicatedBackFromTheSurvivor) {
  auto plan = plan_replication(
      input(policy(3, 2, "beta"), {ckpt(1, "alpha", {missing("alpha"), verified("beta")})}));
  EXPECT_THAT(copies(plan), ElementsAre("1:beta->alpha"));
  EXPECT_EQ(plan.copies[0].why, "re-replicate the copy lost at alpha");
}

TEST(ReplicationPlan, CorruptCopyIsTreatedLikeAMissingOne) {
  auto plan =
      plan_replication(input(policy(), {ckpt(1, "alpha", {corrupt("alpha"), verified("beta")})}));
  EXPECT_THAT(copies(plan), ElementsAre("1:beta->alpha"));
  EXPECT_EQ(plan.copies[0].why, "re-replicate the corrupt copy at alpha");
}

TEST(ReplicationPlan, OriginComesBeforeOtherSitesButAfterTheNamedOne) {
  auto plan = plan_replication(input(policy(3, 3, "gamma"),
                                     {ckpt(1, "alpha", {missing("alpha"), verified("beta")})},
                                     {"alpha", "beta", "delta", "gamma"}));
  EXPECT_THAT(copies(plan), ElementsAre("1:beta->gamma", "1:beta->alpha"));
}

TEST(ReplicationPlan, LostCopyOfAnOlderCheckpointIsNotReReplicated) {
  auto plan =
      plan_replication(input(policy(), {ckpt(1, "alpha", {missing("alpha"), verified("beta")}),
                                        ckpt(2, "alpha", {verified("alpha"), verified("beta")})}));
  EXPECT_THAT(plan.copies, IsEmpty());
}

TEST(ReplicationPlan, TransferInFlightSuppressesACopyAndCountsTowardsTheTarget) {
  auto in = input(policy(), {ckpt(1, "alpha", {verified("alpha"), copying("beta")})});
  in.in_flight.insert({1, "beta"});
  EXPECT_THAT(plan_replication(in).copies, IsEmpty());  // neither beta again nor gamma

  auto three = input(policy(3, 3), {ckpt(1, "alpha", {verified("alpha")})});
  three.in_flight.insert({1, "beta"});
  EXPECT_THAT(copies(plan_replication(three)), ElementsAre("1:alpha->gamma"));
}

TEST(ReplicationPlan, UnusableSitesAreNeitherDestinationsNorSources) {
  // beta is unreachable: its verified copy cannot be the source, nor does it count as held.
  auto plan =
      plan_replication(input(policy(), {ckpt(1, "alpha", {verified("beta")})}, {"alpha", "gamma"}));
  EXPECT_THAT(plan.copies, IsEmpty());

  auto from_alpha = plan_replication(input(
      policy(), {ckpt(1, "alpha", {verified("alpha"), verified("beta")})}, {"alpha", "gamma"}));
  EXPECT_THAT(copies(from_alpha), ElementsAre("1:alpha->gamma"));
}

TEST(ReplicationPlan, SourceIsTheVerifiedCopyWithTheBestRoute) {
  auto in = input(policy(3, 3), {ckpt(1, "alpha", {verified("alpha"), verified("beta")})});
  in.bandwidth[{"alpha", "gamma"}] = 10e6;
  in.bandwidth[{"beta", "gamma"}] = 90e6;
  EXPECT_THAT(copies(plan_replication(in)), ElementsAre("1:beta->gamma"));
}

TEST(ReplicationPlan, OneCopyMeansNoTransfer) {
  auto plan = plan_replication(input(policy(3, 1), {ckpt(1, "alpha", {verified("alpha")})}));
  EXPECT_THAT(plan.copies, IsEmpty());
}

TEST(ReplicationPlan, EnoughCopiesMeansNoTransfer) {
  auto plan =
      plan_replication(input(policy(), {ckpt(1, "alpha", {verified("alpha"), verified("gamma")})}));
  EXPECT_THAT(plan.copies, IsEmpty());
}

TEST(ReplicationPlan, NeverMoreCopiesThanUsableSites) {
  auto plan = plan_replication(
      input(policy(3, 8), {ckpt(1, "alpha", {verified("alpha")})}, {"alpha", "beta"}));
  EXPECT_THAT(copies(plan), ElementsAre("1:alpha->beta"));
}

TEST(ReplicationPlan, DisabledPolicyPlansNothing) {
  ReplicationSpec off = policy(1, 2);
  off.enabled = false;
  auto plan = plan_replication(
      input(off, {ckpt(1, "alpha", {verified("alpha")}), ckpt(2, "alpha", {verified("alpha")})}));
  EXPECT_THAT(plan.copies, IsEmpty());
  EXPECT_THAT(plan.deletes, IsEmpty());
}

// --- retention ------------------------------------------------------------------------------

TEST(ReplicationPlan, RetentionDeletesOlderCheckpointsOnceTheNewestIsHeldEverywhereWanted) {
  auto plan = plan_replication(
      input(policy(2, 2), {ckpt(1, "alpha", {verified("alpha"), verified("beta")}),
                           ckpt(2, "alpha", {verified("alpha"), verified("beta")}),
                           ckpt(3, "alpha", {verified("alpha"), verified("beta")})}));
  EXPECT_THAT(plan.copies, IsEmpty());
  EXPECT_THAT(deletes(plan), ElementsAre("1@alpha", "1@beta"));
  EXPECT_EQ(plan.deletes[0].why, "retention: older than the newest 2 verified checkpoints");
}

TEST(ReplicationPlan, RetentionWaitsWhileTheNewestIsNotYetReplicated) {
  auto plan =
      plan_replication(input(policy(1, 2), {ckpt(1, "alpha", {verified("alpha"), verified("beta")}),
                                            ckpt(2, "alpha", {verified("alpha")})}));
  EXPECT_THAT(copies(plan), ElementsAre("2:alpha->beta"));
  EXPECT_THAT(plan.deletes, IsEmpty());  // checkpoint 1 is the only off-site copy until then
}

TEST(ReplicationPlan, RetentionKeepsTheNewestSafeCheckpointWhenSavesOutrunTheCopies) {
  // Checkpoints come faster than a copy travels: 2 is the newest held at two sites, 3 to 5 are
  // only at alpha, and 4 is on its way to beta. Keeping 1: 5 stays (the newest), 2 stays (what
  // a loss of alpha falls back to), 4 stays while it is read; 1 and 3 go.
  auto in = input(policy(1, 2), {ckpt(1, "alpha", {verified("alpha"), verified("beta")}),
                                 ckpt(2, "alpha", {verified("alpha"), verified("beta")}),
                                 ckpt(3, "alpha", {verified("alpha")}),
                                 ckpt(4, "alpha", {verified("alpha"), copying("beta")}),
                                 ckpt(5, "alpha", {verified("alpha")})});
  in.in_flight.insert({4, "beta"});
  EXPECT_THAT(deletes(plan_replication(in)), ElementsAre("1@alpha", "1@beta", "3@alpha"));
}

TEST(ReplicationPlan, RetentionDeletesNothingBeforeAnyCheckpointIsSafe) {
  auto plan = plan_replication(input(
      policy(1, 2), {ckpt(1, "alpha", {verified("alpha")}), ckpt(2, "alpha", {verified("alpha")}),
                     ckpt(3, "alpha", {verified("alpha")})}));
  EXPECT_THAT(copies(plan), ElementsAre("3:alpha->beta"));
  EXPECT_THAT(plan.deletes, IsEmpty());
}

TEST(ReplicationPlan, RetentionDoesNotCountACopyInFlight) {
  auto in = input(policy(1, 2), {ckpt(1, "alpha", {verified("alpha"), verified("beta")}),
                                 ckpt(2, "alpha", {verified("alpha"), copying("beta")})});
  in.in_flight.insert({2, "beta"});
  EXPECT_THAT(plan_replication(in).deletes, IsEmpty());
}

TEST(ReplicationPlan, RetentionWithFewerUsableSitesThanCopiesNeedsOnlyThose) {
  auto plan = plan_replication(input(
      policy(1, 2), {ckpt(1, "alpha", {verified("alpha")}), ckpt(2, "alpha", {verified("alpha")})},
      {"alpha"}));
  EXPECT_THAT(plan.copies, IsEmpty());
  EXPECT_THAT(deletes(plan), ElementsAre("1@alpha"));
}

TEST(ReplicationPlan, NewestUsableCheckpointIsNeverDeleted) {
  ReplicationSpec zero = policy(0, 1);  // a keep below 1 (never parsed) still keeps the newest
  auto plan = plan_replication(
      input(zero, {ckpt(1, "alpha", {verified("alpha")}), ckpt(2, "alpha", {verified("alpha")})}));
  EXPECT_THAT(deletes(plan), ElementsAre("1@alpha"));
  EXPECT_EQ(plan.deletes[0].why, "retention: older than the newest 1 verified checkpoint");
}

TEST(ReplicationPlan, OneCopyStillRunsRetention) {
  auto plan = plan_replication(input(policy(1, 1), {ckpt(1, "alpha", {verified("alpha")}),
                                                    ckpt(2, "alpha", {verified("alpha")})}));
  EXPECT_THAT(plan.copies, IsEmpty());
  EXPECT_THAT(deletes(plan), ElementsAre("1@alpha"));
}

TEST(ReplicationPlan, KeepCountsOnlyVerifiedCheckpoints) {
  // 3 and 4 are still being verified: the newest two usable ones are 1 and 2, so nothing goes,
  // and 3 and 4 are never deleted nor counted.
  auto plan = plan_replication(input(
      policy(2, 1), {ckpt(1, "alpha", {verified("alpha")}), ckpt(2, "alpha", {verified("alpha")}),
                     ckpt(3, "alpha", {present("alpha")}), ckpt(4, "alpha", {present("alpha")})}));
  EXPECT_THAT(plan.deletes, IsEmpty());

  auto older = plan_replication(input(
      policy(1, 1), {ckpt(1, "alpha", {verified("alpha")}), ckpt(2, "alpha", {present("alpha")}),
                     ckpt(3, "alpha", {verified("alpha")})}));
  EXPECT_THAT(deletes(older), ElementsAre("1@alpha"));  // 2 is not usable: never deleted
}

TEST(ReplicationPlan, RetentionSkipsGoneCopiesAndUnusableSitesAndDeletesCorruptOnes) {
  auto plan = plan_replication(input(policy(1, 1),
                                     {ckpt(1, "alpha",
                                           {verified("alpha"), corrupt("beta"), missing("gamma"),
                                            deleted("delta"), verified("epsilon")}),
                                      ckpt(2, "alpha", {verified("alpha")})},
                                     {"alpha", "beta", "gamma", "delta"}));
  EXPECT_THAT(deletes(plan), ElementsAre("1@alpha", "1@beta"));
}

TEST(ReplicationPlan, RetentionDeletesOldestFirstInStepOrder) {
  std::vector<CheckpointView> cps = {
      ckpt(4, "alpha", {verified("alpha")}), ckpt(1, "alpha", {verified("alpha")}),
      ckpt(3, "alpha", {verified("alpha")}), ckpt(2, "alpha", {verified("alpha")})};
  auto plan = plan_replication(input(policy(2, 1), cps));
  EXPECT_THAT(deletes(plan), ElementsAre("1@alpha", "2@alpha"));
}

// --- paths ----------------------------------------------------------------------------------

TEST(ReplicaPath, LivesUnderTheSitesCheckpointRootInADirectoryOrchestrateOwns) {
  EXPECT_EQ(replica_path("/ckpt", 7, 500, "/scratch/run/step-500.ckpt"),
            "/ckpt/.orchestrate/replicas/job-7/step-500/step-500.ckpt");
  EXPECT_EQ(replica_path("/ckpt/", 7, 500, "/scratch/run/step-500/"),
            "/ckpt/.orchestrate/replicas/job-7/step-500/step-500");
  EXPECT_EQ(replica_path("/", 1, 2, "model.pt"), "/.orchestrate/replicas/job-1/step-2/model.pt");
}

TEST(DatasetPath, IsTheNameUnderTheRoot) {
  EXPECT_EQ(dataset_path("/lustre/datasets", "imagenet"), "/lustre/datasets/imagenet");
  EXPECT_EQ(dataset_path("/lustre/datasets/", "c4"), "/lustre/datasets/c4");
}

}  // namespace
}  // namespace orch
