// Dependencies between jobs (issue 45): a job with `after:` waits with the reason, starts when
// the job it waits for succeeded (or ended), with that job's newest verified checkpoint at its
// site in ORCH_AFTER_<NAME>_CHECKPOINT, and is cancelled with the reason when it can no longer
// start; unknown jobs and cycles are refused at submit.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainDependency : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha"), make_cluster("beta")}); }

  static JobSpec waiting_for(std::string name, std::vector<AfterSpec> after) {
    JobSpec spec = make_job().name(std::move(name));
    spec.after = std::move(after);
    return spec;
  }
  // The job's launches in the outbox of any cluster.
  std::vector<OutboxRow> launches_of(JobId id) {
    std::vector<OutboxRow> out;
    for (const auto& cluster : {"alpha", "beta"}) {
      for (const auto& a : outbox(cluster)) {
        if (a.kind != ActionKind::launch) continue;
        for (const auto& at : attempts(id)) {
          if (at.token == a.token) out.push_back(a);
        }
      }
    }
    return out;
  }
};

TEST_F(BrainDependency, EvalWaitsForTrainThenRunsOnTrainsLastVerifiedCheckpoint) {
  // train keeps its checkpoints at alpha only (one copy): eval is placed where they are.
  JobId train_id = submit(make_job().name("train").on({"alpha"}).replicate(3, 1));
  site_launches_all("alpha");
  const AttemptRow run = last_attempt(train_id);
  train(run, 1, 30, /*every=*/10);

  JobId eval_id = submit(waiting_for("eval", {{"train"}}));
  EXPECT_EQ(job(eval_id).state, JobState::pending);
  EXPECT_EQ(job(eval_id).reason, "waiting for job 1 (train) to succeed");
  EXPECT_TRUE(attempts(eval_id).empty());
  EXPECT_EQ(job(eval_id).spec.after.at(0).id, train_id);  // resolved at submit
  clock.advance_ms(10'000);
  handle(Tick{});
  EXPECT_TRUE(attempts(eval_id).empty());

  exits(run, 0);
  ASSERT_EQ(job(train_id).state, JobState::succeeded);
  handle(Tick{});

  ASSERT_EQ(attempts(eval_id).size(), 1u);
  EXPECT_EQ(last_attempt(eval_id).cluster, "alpha");
  auto launch = launches_of(eval_id);
  ASSERT_EQ(launch.size(), 1u);
  EXPECT_EQ(launch[0].payload["env"]["ORCH_AFTER_TRAIN_CHECKPOINT"], ckpt_path(run, 30));
}

TEST_F(BrainDependency, ADependentWaitsForTheLastCheckpointToBeVerified) {
  instant_data = false;  // the site lists copies only when the test says so
  JobId train_id = submit(make_job().name("train").on({"alpha"}).replicate(3, 1));
  site_launches_all("alpha");
  const AttemptRow run = last_attempt(train_id);
  train(run, 1, 10, /*every=*/10);
  JobId eval_id = submit(waiting_for("eval", {{"train"}}));
  exits(run, 0);
  handle(Tick{});

  EXPECT_TRUE(attempts(eval_id).empty());
  EXPECT_EQ(job(eval_id).reason,
            "waiting for job 1 (train)'s checkpoint at step 10 to be verified");
  settle_data();
  clock.advance_ms(1'000);
  handle(Tick{});
  ASSERT_EQ(attempts(eval_id).size(), 1u);
  EXPECT_EQ(launches_of(eval_id).at(0).payload["env"]["ORCH_AFTER_TRAIN_CHECKPOINT"],
            ckpt_path(run, 10));
}

TEST_F(BrainDependency, AFailedTrainCancelsEvalWithTheReason) {
  JobId train_id = submit(make_job().name("train"));
  site_launches_all("alpha");
  JobId eval_id = submit(waiting_for("eval", {{"train"}}));
  JobId report_id = submit(waiting_for("report", {{"eval"}}));

  exits(last_attempt(train_id), 1);  // the job's own failure, no restarts left
  ASSERT_EQ(job(train_id).state, JobState::failed);
  handle(Tick{});

  EXPECT_EQ(job(eval_id).state, JobState::cancelled);
  EXPECT_EQ(job(eval_id).reason, "job 1 (train) failed: it can no longer succeed");
  EXPECT_THAT(event_kinds(eval_id), ::testing::Contains("cancelled"));
  EXPECT_TRUE(attempts(eval_id).empty());
  // What waited for eval follows on the next round.
  handle(Tick{});
  EXPECT_EQ(job(report_id).state, JobState::cancelled);
  EXPECT_EQ(job(report_id).reason, "job 2 (eval) was cancelled: it can no longer succeed");
}

TEST_F(BrainDependency, AJobAfterAnotherEndsStartsWhenThatJobFails) {
  JobId train_id = submit(make_job().name("train"));
  site_launches_all("alpha");
  JobId cleanup_id = submit(waiting_for("cleanup", {{"train", AfterState::ended}}));
  EXPECT_EQ(job(cleanup_id).reason, "waiting for job 1 (train) to end");

  exits(last_attempt(train_id), 1);
  handle(Tick{});
  EXPECT_EQ(attempts(cleanup_id).size(), 1u);
  EXPECT_EQ(job(cleanup_id).state, JobState::placed);
}

TEST_F(BrainDependency, AJobNamedByIdIsWaitedFor) {
  JobId train_id = submit(make_job().name("train"));
  JobId eval_id = submit(waiting_for("eval", {{std::to_string(train_id)}}));
  EXPECT_EQ(job(eval_id).reason, "waiting for job 1 (train) to succeed");
}

TEST_F(BrainDependency, AJobThatWaitsForItselfIsRefusedAsACycle) {
  auto r = brain->handle(SubmitJob{waiting_for("loop", {{"loop"}})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_EQ(r.error().where, "after[0]");
  EXPECT_THAT(r.error().message, HasSubstr("a cycle: job loop would wait for itself"));
  EXPECT_TRUE(store->newest_job_named("loop").value() == std::nullopt);
}

TEST_F(BrainDependency, AnUnknownJobIsRefusedAtSubmit) {
  submit(make_job().name("train"));
  auto r = brain->handle(SubmitJob{waiting_for("eval", {{"train"}, {"trian"}})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().where, "after[1]");
  EXPECT_THAT(r.error().message, HasSubstr("no job named trian"));
  auto by_id = brain->handle(SubmitJob{waiting_for("eval", {{"99"}})});
  ASSERT_FALSE(by_id.ok());
  EXPECT_THAT(by_id.error().message, HasSubstr("after[0]: no job 99"));
}

TEST_F(BrainDependency, WaitingForAJobThatAlreadyFailedToSucceedIsRefused) {
  JobId train_id = submit(make_job().name("train"));
  site_launches_all("alpha");
  exits(last_attempt(train_id), 1);
  auto r = brain->handle(SubmitJob{waiting_for("eval", {{"train"}})});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("job 1 (train) already failed"));
}

TEST_F(BrainDependency, AJobWaitingForTwoSaysWhatItStillWaitsFor) {
  JobId train_id = submit(make_job().name("train"));
  JobId prep_id = submit(make_job().name("prep"));
  site_launches_all("alpha");
  site_launches_all("beta");
  JobId eval_id = submit(waiting_for("eval", {{"train"}, {"prep", AfterState::ended}}));
  EXPECT_EQ(job(eval_id).reason, "waiting for job 1 (train) to succeed, job 2 (prep) to end");
  exits(last_attempt(prep_id), 1);
  handle(Tick{});
  EXPECT_EQ(job(eval_id).reason, "waiting for job 1 (train) to succeed");
  EXPECT_TRUE(attempts(eval_id).empty());
  exits(last_attempt(train_id), 0);
  handle(Tick{});
  EXPECT_EQ(attempts(eval_id).size(), 1u);
}

}  // namespace
}  // namespace orch::testing
