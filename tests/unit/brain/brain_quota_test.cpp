// Team quotas (issue 18): a team runs within its GPU quota first; beyond it, it borrows idle
// GPUs, and those borrowed GPUs are the first taken back (saved, stopped, resumed, no restart
// spent) when a team within its quota needs them; among teams that borrow, the one with the
// smallest dominant share goes first. The site's part is played with events.
#include <gmock/gmock.h>

#include <map>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class BrainQuota : public BrainFixture {
 protected:
  // One cluster of 2 nodes x 4 GPUs, for two teams of 4 GPUs each.
  void start_with(std::map<std::string, TeamQuota> teams) {
    SchedulingSpec s;
    s.priority_classes = {{"hero", 1000}, {"ablation", 100}};
    s.teams = std::move(teams);
    start({make_cluster("alpha")}, s);
  }
  void SetUp() override { start_with({{"vision", {4, {}, true}}, {"nlp", {4, {}, true}}}); }

  // A job of the team running on alpha at step `at`, with checkpoints every 10 steps.
  JobId running(const std::string& team, int gpus, int at, int priority = 0) {
    JobId id = submit(make_job().gpus(gpus).team(team).priority(priority).preempt_grace_s(60));
    site_launches_all("alpha");
    if (!carrying(id).empty()) train(last_attempt(id), 1, at, 10);
    return id;
  }
  std::vector<OutboxRow> signals() {
    std::vector<OutboxRow> out;
    for (const auto& a : outbox("alpha")) {
      if (a.kind == ActionKind::signal) out.push_back(a);
    }
    return out;
  }
  std::string message(JobId id, const std::string& kind) {
    for (const auto& e : store->events_of(id).value()) {
      if (e.kind == kind) return e.message;
    }
    return "";
  }
};

TEST_F(BrainQuota, ATeamBeyondItsQuotaBorrowsIdleGpusAndThePlacedEventSaysSo) {
  JobId own = running("vision", 4, 5);
  JobId borrowed = running("vision", 4, 5);
  EXPECT_EQ(carrying(own).size(), 1u);
  ASSERT_EQ(carrying(borrowed).size(), 1u) << "idle GPUs are lent beyond the quota";
  EXPECT_THAT(message(own, "placed"), ::testing::Not(HasSubstr("borrowed")));
  EXPECT_THAT(message(borrowed, "placed"),
              HasSubstr("on borrowed GPUs, the first taken back (team vision holds 4 GPU(s), "
                        "quota 4 fleet-wide)"));
}

TEST_F(BrainQuota, ATeamWithinItsQuotaTakesBorrowedGpusBackWhateverTheirPriority) {
  JobId own = running("vision", 4, 21);                     // 1 step at risk, within the quota
  JobId lent = running("vision", 4, 29, /*priority=*/500);  // 9 steps at risk, borrowed
  JobId nlp = submit(make_job().gpus(4).team("nlp"));       // priority 0, within nlp's quota
  EXPECT_TRUE(attempts(nlp).empty());

  // The borrowed attempt is asked to save, though it risks more steps and has a higher
  // priority; vision's own attempt runs on.
  const auto asked = signals();
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].token, last_attempt(lent).token);
  EXPECT_FALSE(last_attempt(own).preempt_for.has_value());
  EXPECT_THAT(message(lent, "preempting"),
              HasSubstr("whose team is within its quota: it runs on borrowed GPUs"));
  EXPECT_THAT(message(nlp, "preemption"), HasSubstr("job 2 (borrowed by vision, 9 step(s)"));

  // It saves: stopped as quota_reclaimed, no restart spent; nlp runs once its GPUs are free.
  clock.advance_ms(2'000);
  train(last_attempt(lent), 30, 30, 30);
  const AttemptRow stopped = attempts(lent).at(0);
  EXPECT_EQ(stopped.cause, ExitCause::quota_reclaimed);
  EXPECT_THAT(message(lent, "preempted"), HasSubstr("borrowed GPUs taken back for job 3"));
  EXPECT_EQ(store->job(lent).value()->state, JobState::resuming);
  EXPECT_EQ(store->job(lent).value()->infra_restarts, 0);
  EXPECT_EQ(store->job(lent).value()->user_restarts, 0);
  exits(stopped, std::nullopt, 15);
  handle(Tick{});
  ASSERT_EQ(carrying(nlp).size(), 1u);
  EXPECT_THAT(message(nlp, "placed"), ::testing::Not(HasSubstr("borrowed")));

  // When vision's own job ends, the reclaimed one resumes from the checkpoint it saved.
  exits(last_attempt(own), 0);
  handle(Tick{});
  ASSERT_EQ(attempts(lent).size(), 2u);
  EXPECT_EQ(last_attempt(lent).resumed_from_step, 30);
}

TEST_F(BrainQuota, AJobWithinItsQuotaIsProtectedFromAnotherTeamsHigherPriority) {
  JobId nlp = running("nlp", 4, 5, /*priority=*/100);
  JobId vision_own = running("vision", 4, 5, /*priority=*/100);
  // vision is at its quota: its hero job would borrow, and nothing is idle. It may preempt its
  // own team's lower-priority job, never nlp's job within nlp's quota.
  JobId hero = submit(make_job().gpus(4).team("vision").priority(1000));
  const auto asked = signals();
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].token, last_attempt(vision_own).token);
  EXPECT_FALSE(last_attempt(nlp).preempt_for.has_value());
  EXPECT_EQ(last_attempt(vision_own).preempt_for, hero);
}

TEST_F(BrainQuota, AnotherTeamsJobWithinItsQuotaIsNotPreemptedForPriority) {
  JobId nlp = running("nlp", 4, 5, /*priority=*/100);
  JobId nlp_lent = running("nlp", 4, 5, /*priority=*/900);  // borrowed, but higher priority
  // vision has used none of its quota: it takes back nlp's borrowed GPUs, not nlp's own.
  JobId hero = submit(make_job().gpus(4).team("vision").priority(1000));
  ASSERT_EQ(signals().size(), 1u);
  EXPECT_EQ(last_attempt(nlp_lent).preempt_for, hero);
  EXPECT_FALSE(last_attempt(nlp).preempt_for.has_value());
}

TEST_F(BrainQuota, AHeroJobsExplainNamesTheProtectedVictimAndTheRule) {
  start_with({{"vision", {4, {}, true}}, {"nlp", {4, {}, true}}, {"llm", {8, {}, true}}});
  JobId sweep = running("vision", 4, 5, /*priority=*/100);
  JobId nlp = running("nlp", 4, 5, /*priority=*/100);
  JobId hero = submit(make_job().gpus(4).team("llm").priority(1000));
  EXPECT_TRUE(signals().empty()) << "both teams are within their quotas";
  EXPECT_EQ(job(hero).state, JobState::pending);

  const auto verdicts = store->verdicts_of(hero).value();
  ASSERT_EQ(verdicts.size(), 1u);
  const PlacementVerdictRow& alpha = verdicts[0];
  EXPECT_THAT(alpha.refused_by, ElementsAre("capacity: only 0 of 8 GPUs free, job needs 4"));
  ASSERT_EQ(alpha.preemptions.size(), 2u);
  for (const auto& p : alpha.preemptions) {
    EXPECT_FALSE(p.taken);
    EXPECT_EQ(p.victim.gpus, 4);
  }
  EXPECT_EQ(alpha.preemptions[0].victim.job, sweep);
  EXPECT_EQ(alpha.preemptions[0].victim.team, "vision");
  EXPECT_EQ(alpha.preemptions[0].victim.job_name, job(sweep).name);
  EXPECT_EQ(alpha.preemptions[0].why, "team vision within its quota 4/4, protected");
  EXPECT_EQ(alpha.preemptions[1].victim.job, nlp);
  EXPECT_EQ(alpha.preemptions[1].why, "team nlp within its quota 4/4, protected");
}

TEST_F(BrainQuota, TheVictimAPreemptionTakesIsNotedTakenAndTheProtectedOneIsNot) {
  JobId own = running("vision", 4, 5, /*priority=*/100);
  JobId nlp = running("nlp", 4, 5, /*priority=*/100);
  JobId hero = submit(make_job().gpus(4).team("vision").priority(1000));
  const auto verdicts = store->verdicts_of(hero).value();
  ASSERT_EQ(verdicts.size(), 1u);
  std::map<JobId, PreemptionNote> by_job;
  for (const auto& p : verdicts[0].preemptions) by_job[p.victim.job] = p;
  ASSERT_EQ(by_job.size(), 2u);
  EXPECT_TRUE(by_job[own].taken);
  EXPECT_EQ(by_job[own].why,
            "taken: priority 100 below the job's 1000; 5 step(s) at risk since its last "
            "checkpoint");
  EXPECT_FALSE(by_job[nlp].taken);
  EXPECT_EQ(by_job[nlp].why, "team nlp within its quota 4/4, protected");
  EXPECT_EQ(verdicts[0].preemptions[0].victim.job, own) << "the taken first";
}

TEST_F(BrainQuota, ATeamThatMayNotBorrowWaitsAtItsQuota) {
  start_with({{"vision", {4, {}, false}}});
  JobId own = running("vision", 4, 5);
  JobId more = submit(make_job().gpus(4).team("vision"));
  EXPECT_EQ(carrying(own).size(), 1u);
  EXPECT_TRUE(attempts(more).empty()) << "4 GPUs are idle, but vision may not borrow";
  EXPECT_THAT(store->job(more).value()->reason,
              HasSubstr("the job's team vision has 0 GPU(s) of quota left here, the job needs 4"));
  exits(last_attempt(own), 0);
  handle(Tick{});
  EXPECT_EQ(carrying(more).size(), 1u);
}

TEST_F(BrainQuota, ATeamAtItsQuotaThatMayNotBorrowStillPreemptsItsOwnLowerPriority) {
  start_with({{"vision", {4, {}, false}}});
  JobId low = running("vision", 4, 5, /*priority=*/100);
  JobId hero = submit(make_job().gpus(4).team("vision").priority(1000));
  EXPECT_EQ(last_attempt(low).preempt_for, hero) << "its own GPUs come back to its quota";
}

TEST_F(BrainQuota, AJobThatMayNotBePreemptedDoesNotBorrow) {
  JobId own = running("vision", 4, 5);
  JobId fixed = submit(make_job().gpus(4).team("vision").preemptible(false));
  EXPECT_EQ(carrying(own).size(), 1u);
  EXPECT_TRUE(attempts(fixed).empty()) << "borrowed GPUs must be given back on demand";
}

TEST_F(BrainQuota, APerClusterQuotaSendsTheJobWhereItsTeamHasRoom) {
  SchedulingSpec s;
  s.teams = {{"vision", {std::nullopt, {{"alpha", 4}}, true}}};
  start({make_cluster("alpha"), make_cluster("beta")}, s);
  JobId first = submit(make_job().gpus(4).team("vision").on({"alpha", "beta"}));
  JobId second = submit(make_job().gpus(4).team("vision").prefer({"alpha"}));
  EXPECT_EQ(last_attempt(first).cluster, "alpha");
  // alpha still has 4 idle GPUs, but vision's quota there is used: beta has no bound.
  EXPECT_EQ(last_attempt(second).cluster, "beta");
  EXPECT_THAT(message(second, "placed"), ::testing::Not(HasSubstr("borrowed")));
}

TEST_F(BrainQuota, TeamsThatBorrowShareByDominantShareNotByArrival) {
  // 8 one-GPU slots; quotas of 1 each, so nearly everything is borrowed.
  start_with({{"vision", {1, {}, true}}, {"nlp", {1, {}, true}}});
  std::vector<JobId> vision;
  for (int i = 0; i < 6; ++i) vision.push_back(running("vision", 1, 5));
  for (int i = 0; i < 2; ++i) running("nlp", 1, 5);
  // Both teams queue more; vision's came first. Equal priorities: nobody is preempted.
  std::vector<JobId> vision_waits{submit(make_job().gpus(1).team("vision")),
                                  submit(make_job().gpus(1).team("vision"))};
  std::vector<JobId> nlp_waits{submit(make_job().gpus(1).team("nlp")),
                               submit(make_job().gpus(1).team("nlp"))};
  EXPECT_TRUE(signals().empty());
  // Two of vision's jobs end: vision then holds 4 of 8 GPUs, nlp 2, so nlp gets both.
  exits(last_attempt(vision[0]), 0);
  exits(last_attempt(vision[1]), 0);
  handle(Tick{});
  EXPECT_EQ(carrying(nlp_waits[0]).size(), 1u);
  EXPECT_EQ(carrying(nlp_waits[1]).size(), 1u);
  EXPECT_TRUE(attempts(vision_waits[0]).empty());
  EXPECT_TRUE(attempts(vision_waits[1]).empty());
  // Now 4 and 4: the next free GPU goes by arrival, to vision.
  exits(last_attempt(vision[2]), 0);
  handle(Tick{});
  EXPECT_EQ(carrying(vision_waits[0]).size(), 1u);
}

TEST_F(BrainQuota, WithoutTeamsInTheClustersFileNothingIsBorrowedOrReclaimed) {
  start({make_cluster("alpha")}, SchedulingSpec{});
  JobId a = running("vision", 4, 5);
  JobId b = running("vision", 4, 5);
  JobId nlp = submit(make_job().gpus(4).team("nlp"));
  EXPECT_THAT(message(b, "placed"), ::testing::Not(HasSubstr("borrowed")));
  EXPECT_TRUE(signals().empty());
  EXPECT_TRUE(attempts(nlp).empty());
  EXPECT_EQ(carrying(a).size(), 1u);
}

}  // namespace
}  // namespace orch::testing
