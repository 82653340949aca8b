// Priorities and checkpoint-aware preemption (issue 18): a job of higher priority is placed
// first; when it fits nowhere and jobs of lower priority hold what it needs, the cheapest of
// them (fewest steps since their last checkpoint) are asked to save (a signal action), stopped
// at that checkpoint or after their grace, and resumed later without spending a restart. The
// site's part is played with events; checkpoints are verified at once (instant_data).
#include <gmock/gmock.h>

#include "scheduler/model/launch_request_json.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainPreemption : public BrainFixture {
 protected:
  // One cluster of 2 nodes x 4 GPUs: two 4-GPU jobs fill it.
  void SetUp() override {
    SchedulingSpec s;
    s.priority_classes = {{"hero", 1000}, {"ablation", 100}};
    start({make_cluster("alpha")}, s);
  }

  std::vector<OutboxRow> actions(ActionKind kind) {
    std::vector<OutboxRow> out;
    for (const auto& a : outbox("alpha")) {
      if (a.kind == kind) out.push_back(a);
    }
    return out;
  }
  // An ablation running on alpha, at step `at`, with checkpoints every `every` steps.
  JobId ablation(int at, int every, double grace_s = 60) {
    JobId id = submit(make_job().gpus(4).priority_class("ablation").preempt_grace_s(grace_s));
    site_launches_all("alpha");
    train(last_attempt(id), 1, at, every);
    return id;
  }
  // The site confirms that the stopped attempt's processes are gone.
  void site_confirms_gone(const AttemptRow& a) { exits(a, std::nullopt, 15); }
  std::vector<std::string> messages(JobId id, const std::string& kind) {
    std::vector<std::string> out;
    for (const auto& e : store->events_of(id).value()) {
      if (e.kind == kind) out.push_back(e.message);
    }
    return out;
  }
};

TEST_F(BrainPreemption, APriorityClassIsResolvedAtSubmitAndAnUnknownOneIsRefused) {
  JobId id = submit(make_job().gpus(1).priority_class("hero"));
  EXPECT_EQ(store->job(id).value()->spec.priority, 1000);
  auto bad = brain->handle(SubmitJob{make_job().gpus(1).priority_class("heroo")});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("priority class \"heroo\" is not in the clusters "
                                             "file's priority_classes (did you mean \"hero\"?)"));
  EXPECT_THAT(bad.error().message, HasSubstr("known classes: ablation (100), hero (1000)"));
}

TEST_F(BrainPreemption, ALowTeamCannotPreemptByClaimingHeroOrAnotherTeam) {
  SchedulingSpec s;
  s.priority_classes = {{"hero", 1000}, {"ablation", 100}};
  s.class_teams = {{"hero", {"llm"}}};
  start({make_cluster("alpha")}, s);
  const JobId running = ablation(5, 5);
  ablation(5, 5);
  const Submitter vision{"alice", false, {"vision"}};
  JobSpec hero = make_job().gpus(4).priority_class("hero").team("vision");
  auto refused = brain->handle(SubmitJob{hero, vision});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::forbidden);
  EXPECT_THAT(refused.error().message, HasSubstr("may not use priority class hero"));
  JobSpec as_llm = make_job().gpus(4).priority(1000).team("llm");
  EXPECT_EQ(brain->handle(SubmitJob{as_llm, vision}).error().kind, ErrorKind::forbidden);
  JobSpec raw = make_job().gpus(4).priority(1000);
  EXPECT_EQ(brain->handle(SubmitJob{raw, vision}).error().kind, ErrorKind::forbidden);
  EXPECT_TRUE(actions(ActionKind::signal).empty()) << "nothing was asked to save";
  EXPECT_EQ(store->job(running).value()->state, JobState::running);
  // The team that holds the class may.
  JobSpec granted = make_job().gpus(4).priority_class("hero").team("llm");
  ASSERT_TRUE(brain->handle(SubmitJob{granted, Submitter{"lena", false, {"llm"}}}).ok());
  EXPECT_FALSE(actions(ActionKind::signal).empty()) << "hero preempts for its own team";
}

TEST_F(BrainPreemption, HigherPriorityIsPlacedFirstWhenCapacityReturns) {
  JobId a = ablation(5, 5);
  JobId b = ablation(5, 5);
  // Both wait behind the full cluster; they may not preempt (equal or no priority).
  JobId low = submit(make_job().gpus(4).priority(50));
  JobId high = submit(make_job().gpus(4).priority(100));
  EXPECT_TRUE(attempts(low).empty());
  EXPECT_TRUE(attempts(high).empty());
  EXPECT_TRUE(actions(ActionKind::signal).empty()) << "equal priority never preempts";
  exits(last_attempt(a), 0);
  handle(Tick{});
  ASSERT_EQ(attempts(high).size(), 1u) << "the later job of higher priority goes first";
  EXPECT_TRUE(attempts(low).empty());
  exits(last_attempt(b), 0);
  handle(Tick{});
  EXPECT_EQ(attempts(low).size(), 1u);
}

TEST_F(BrainPreemption, TheVictimWithFewestStepsAtRiskSavesStopsAndResumesWithoutARestart) {
  JobId costly = ablation(29, 10);  // 9 steps since checkpoint 20
  JobId cheap = ablation(21, 10);   // 1 step since checkpoint 20
  JobId hero = submit(make_job().gpus(4).priority_class("hero"));
  EXPECT_TRUE(attempts(hero).empty());

  // The cheap one is asked to save; the costly one runs on.
  const auto signals = actions(ActionKind::signal);
  ASSERT_EQ(signals.size(), 1u);
  const AttemptRow victim = last_attempt(cheap);
  EXPECT_EQ(signals[0].token, victim.token);
  EXPECT_EQ(signals[0].payload.value("signal", ""), "USR1");
  EXPECT_EQ(victim.preempt_for, hero);
  EXPECT_THAT(messages(cheap, "preempting").at(0),
              HasSubstr("makes room for job 3 (priority hero 1000): 1 step(s) since its last "
                        "checkpoint; asked to save (SIGUSR1)"));
  EXPECT_THAT(store->job(hero).value()->reason, HasSubstr("waiting for room: preempted job 2"));
  EXPECT_EQ(carrying(costly).size(), 1u);

  // Still running within its grace, no checkpoint yet: it runs on, and nobody else is asked.
  clock.advance_ms(10'000);
  handle(Tick{});
  EXPECT_EQ(carrying(cheap).size(), 1u);
  EXPECT_EQ(actions(ActionKind::signal).size(), 1u);

  // Its checkpoint line comes: stopped at once, as priority_preempted, no restart spent.
  train(last_attempt(cheap), 22, 22, 22);
  const AttemptRow stopped = attempts(cheap).at(0);
  EXPECT_EQ(stopped.state, AttemptState::exited);
  EXPECT_EQ(stopped.cause, ExitCause::priority_preempted);
  EXPECT_TRUE(stopped.cancel_requested);
  EXPECT_THAT(messages(cheap, "preempted").at(0),
              HasSubstr("saved a checkpoint at step 22 after the save request"));
  EXPECT_EQ(store->job(cheap).value()->state, JobState::resuming);
  EXPECT_EQ(store->job(cheap).value()->infra_restarts, 0);
  EXPECT_EQ(store->job(cheap).value()->user_restarts, 0);

  // Its GPUs are free once the site says its processes are gone: the hero goes first.
  handle(Tick{});
  EXPECT_TRUE(attempts(hero).empty()) << "the stopped attempt still holds its GPUs";
  site_confirms_gone(stopped);
  handle(Tick{});
  ASSERT_EQ(attempts(hero).size(), 1u);
  EXPECT_EQ(attempts(cheap).size(), 1u) << "the victim waits for room";

  // Room returns: the victim resumes from the checkpoint it saved.
  exits(last_attempt(costly), 0);
  handle(Tick{});
  ASSERT_EQ(attempts(cheap).size(), 2u);
  EXPECT_EQ(last_attempt(cheap).resumed_from_step, 22);
  EXPECT_EQ(store->job(cheap).value()->infra_restarts, 0);
}

TEST_F(BrainPreemption, AVictimThatNeverCheckpointsIsStoppedAtItsGraceAndResumesFromItsPrevious) {
  JobId a = ablation(12, 10, /*grace_s=*/30);  // checkpoint 10, 2 steps at risk
  JobId b = ablation(18, 10, /*grace_s=*/30);  // 8 steps at risk
  JobId hero = submit(make_job().gpus(4).priority_class("hero"));
  ASSERT_EQ(last_attempt(a).preempt_for, hero);
  EXPECT_FALSE(last_attempt(b).preempt_for.has_value());

  clock.advance_ms(29'000);
  train(last_attempt(a), 13, 14, 0);  // progress, no checkpoint
  handle(Tick{});
  EXPECT_EQ(carrying(a).size(), 1u) << "within its grace";
  clock.advance_ms(1'000);
  handle(Tick{});
  const AttemptRow stopped = attempts(a).at(0);
  EXPECT_EQ(stopped.cause, ExitCause::priority_preempted);
  EXPECT_THAT(messages(a, "preempted").at(0),
              HasSubstr("no checkpoint within its grace of 30 s; it resumes from step 10"));
  ASSERT_EQ(actions(ActionKind::cancel).size(), 1u) << "stopped with TERM after the grace";

  site_confirms_gone(stopped);
  handle(Tick{});
  ASSERT_EQ(attempts(hero).size(), 1u);
  exits(last_attempt(b), 0);
  handle(Tick{});
  ASSERT_EQ(attempts(a).size(), 2u);
  EXPECT_EQ(last_attempt(a).resumed_from_step, 10);
  EXPECT_EQ(store->job(a).value()->infra_restarts, 0);
}

TEST_F(BrainPreemption, OnlyLowerPriorityAndPreemptibleJobsAreVictims) {
  JobId pinned = submit(make_job().gpus(4).priority(0).preemptible(false));
  site_launches_all("alpha");
  JobId peer = submit(make_job().gpus(4).priority(1000));
  site_launches_all("alpha");
  JobId hero = submit(make_job().gpus(4).priority_class("hero"));
  EXPECT_TRUE(attempts(hero).empty());
  EXPECT_TRUE(actions(ActionKind::signal).empty());
  EXPECT_EQ(carrying(pinned).size(), 1u);
  EXPECT_EQ(carrying(peer).size(), 1u);
  EXPECT_THAT(store->job(hero).value()->reason, HasSubstr("waiting for capacity"));
}

TEST_F(BrainPreemption, APreemptionIsCalledOffWhenTheJobIsPlacedAnotherWay) {
  JobId a = ablation(5, 5, /*grace_s=*/10);
  JobId b = ablation(5, 5, /*grace_s=*/10);
  JobId hero = submit(make_job().gpus(4).priority_class("hero"));
  const AttemptRow asked = last_attempt(a).preempt_for ? last_attempt(a) : last_attempt(b);
  const AttemptRow other = last_attempt(a).preempt_for ? last_attempt(b) : last_attempt(a);
  // The other ablation finishes first: the hero takes its room, and the asked one runs on.
  exits(other, 0);
  handle(Tick{});
  ASSERT_EQ(attempts(hero).size(), 1u);
  const AttemptRow now = store->attempt_by_token(asked.token).value().value();
  EXPECT_FALSE(now.preempt_for.has_value());
  EXPECT_EQ(now.state, AttemptState::running);
  EXPECT_EQ(messages(asked.job_id, "preemption-called-off").size(), 1u);
  clock.advance_ms(30'000);  // past the grace it had
  handle(Tick{});
  EXPECT_EQ(store->attempt_by_token(asked.token).value()->state, AttemptState::running);
}

TEST_F(BrainPreemption, APreemptionIsCalledOffWhenTheJobItMakesRoomForIsCancelled) {
  JobId a = ablation(5, 5, /*grace_s=*/10);
  JobId b = ablation(9, 5, /*grace_s=*/10);
  JobId hero = submit(make_job().gpus(4).priority_class("hero"));
  ASSERT_EQ(last_attempt(a).preempt_for, hero);
  handle(CancelJob{hero});
  clock.advance_ms(30'000);  // past the grace it had
  handle(Tick{});
  const AttemptRow spared = last_attempt(a);
  EXPECT_EQ(spared.state, AttemptState::running);
  EXPECT_FALSE(spared.preempt_for.has_value());
  EXPECT_THAT(messages(a, "preemption-called-off").at(0),
              HasSubstr("job 3 no longer waits (cancelled)"));
  EXPECT_EQ(carrying(b).size(), 1u);
}

TEST_F(BrainPreemption, AVictimNotRunningYetIsStoppedAtOnce) {
  JobId queued = submit(make_job().gpus(4).priority(1));
  JobId queued2 = submit(make_job().gpus(4).priority(1));
  ASSERT_EQ(attempts(queued).size(), 1u);  // launching, the site has not confirmed
  ASSERT_EQ(attempts(queued2).size(), 1u);
  JobId hero = submit(make_job().gpus(4).priority_class("hero"));
  EXPECT_TRUE(actions(ActionKind::signal).empty()) << "nothing runs yet to save";
  handle(Tick{});
  const AttemptRow first = attempts(queued).at(0);
  const AttemptRow second = attempts(queued2).at(0);
  const AttemptRow& stopped = first.preempt_for ? first : second;
  EXPECT_EQ(stopped.cause, ExitCause::priority_preempted);
  EXPECT_THAT(messages(stopped.job_id, "preempted").at(0), HasSubstr("not running yet"));
  (void)hero;
}

}  // namespace
}  // namespace orch::testing
