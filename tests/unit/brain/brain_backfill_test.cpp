// Backfill (issue 18): the first waiting job that fits nowhere for lack of free GPUs gets GPUs
// held where it starts soonest; a job after it uses them only when its time_limit ends it before
// that start; the held job runs as soon as they are free; an attempt past its time_limit is
// stopped and resumes later. The site's part is played with events, under the fake clock.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

constexpr double kHourS = 3600;

class BrainBackfill : public BrainFixture {
 protected:
  // One cluster of 2 nodes x 4 GPUs.
  void SetUp() override { start({make_cluster("alpha")}); }

  // A 4-GPU job running on alpha; with a time limit when given.
  JobId running(std::optional<double> time_limit_s) {
    JobBuilder b = make_job().gpus(4);
    if (time_limit_s) b.time_limit_s(*time_limit_s);
    JobId id = submit(b);
    site_launches_all("alpha");
    EXPECT_EQ(carrying(id).size(), 1u);
    return id;
  }
  std::string message(JobId id, const std::string& kind) {
    std::string out;
    for (const auto& e : store->events_of(id).value()) {
      if (e.kind == kind) out = e.message;
    }
    return out;
  }
  std::string reason(JobId id) { return store->job(id).value()->reason; }
};

TEST_F(BrainBackfill, AJobThatEndsBeforeTheHeldJobCanStartUsesItsGpusAndOthersWait) {
  JobId first = running(2 * kHourS);  // alpha: 4 of 8 GPUs until 2 h from now at the latest
  JobId big = submit(make_job().nodes(2).gpus(4));  // 8 GPUs: waits for `first` to end
  EXPECT_TRUE(attempts(big).empty());
  EXPECT_EQ(message(big, "holding"),
            "8 GPU(s) held on alpha; it starts there in 7200 s at the latest, as attempts end by "
            "their time limits (0 spare); a job after it uses them only if its time_limit ends it "
            "by then");

  // The 4 free GPUs are held: a job without a time limit, or one that would end after the big
  // job's start, waits, and says why.
  JobId unlimited = submit(make_job().gpus(4));
  JobId too_long = submit(make_job().gpus(4).time_limit_s(3 * kHourS));
  EXPECT_TRUE(attempts(unlimited).empty());
  EXPECT_TRUE(attempts(too_long).empty());
  EXPECT_THAT(reason(unlimited),
              HasSubstr("held: GPUs held for job 2 (8 GPU(s)), which starts here in 7200 s at "
                        "the latest; 0 spare: a job whose time_limit ends by then may use them"));
  EXPECT_THAT(reason(too_long), HasSubstr("this job's time_limit ends after that"));

  // One that ends in time runs now: backfill.
  JobId quick = submit(make_job().gpus(4).time_limit_s(kHourS));
  ASSERT_EQ(carrying(quick).size(), 1u);

  // Both end: the held job runs before the jobs that waited behind it.
  site_launches_all("alpha");
  clock.advance_ms(30 * 60 * 1000);
  exits(last_attempt(first), 0);
  handle(Tick{});
  EXPECT_TRUE(attempts(big).empty()) << "the backfilled job still holds 4 GPUs";
  EXPECT_TRUE(attempts(unlimited).empty());
  exits(last_attempt(quick), 0);
  handle(Tick{});
  ASSERT_EQ(carrying(big).size(), 1u);
  EXPECT_TRUE(attempts(unlimited).empty());
  EXPECT_TRUE(attempts(too_long).empty());

  // Once it is placed nothing is held: the others run when it ends.
  site_launches_all("alpha");
  exits(last_attempt(big), 0);
  handle(Tick{});
  EXPECT_EQ(carrying(unlimited).size(), 1u);
  EXPECT_EQ(carrying(too_long).size(), 1u);
}

TEST_F(BrainBackfill, WithoutTimeLimitsTheHeldGpusWaitForTheBigJobAndAHigherPriorityPasses) {
  running(std::nullopt);
  JobId big = submit(make_job().nodes(2).gpus(4));
  EXPECT_THAT(message(big, "holding"),
              HasSubstr("it starts there when attempts without a time limit end"));
  JobId small = submit(make_job().gpus(4).time_limit_s(60));
  EXPECT_TRUE(attempts(small).empty()) << "no end is early enough for an unknown start";
  JobId hero = submit(make_job().gpus(4).priority(1000));
  EXPECT_EQ(carrying(hero).size(), 1u) << "a job of higher priority than the held one passes";
}

TEST_F(BrainBackfill, AJobAheadInTheQueueThatGetsBlockedTakesTheHoldOver) {
  JobId first = submit(make_job().gpus(4).time_limit_s(kHourS).preemptible(false));
  site_launches_all("alpha");
  JobId big = submit(make_job().nodes(2).gpus(4));
  EXPECT_FALSE(message(big, "holding").empty());
  // A job of higher priority that cannot preempt the running one is blocked too, and comes
  // first in the queue: the hold is its own now.
  JobId urgent = submit(make_job().nodes(2).gpus(4).priority(500));
  EXPECT_TRUE(attempts(urgent).empty());
  EXPECT_FALSE(message(urgent, "holding").empty());
  exits(last_attempt(first), 0);
  handle(Tick{});
  EXPECT_EQ(carrying(urgent).size(), 1u);
  EXPECT_TRUE(attempts(big).empty());
}

TEST_F(BrainBackfill, AnAttemptPastItsTimeLimitIsStoppedAndResumesFromItsCheckpoint) {
  JobId id = submit(make_job().gpus(4).time_limit_s(600).hang_after_s(0));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 20, 10);
  clock.advance_ms(599'000);
  handle(Tick{});
  EXPECT_EQ(carrying(id).size(), 1u) << "within its limit";
  clock.advance_ms(1'000);
  handle(Tick{});
  const AttemptRow stopped = attempts(id).at(0);
  EXPECT_EQ(stopped.state, AttemptState::exited);
  EXPECT_EQ(stopped.cause, ExitCause::time_limit);
  EXPECT_TRUE(stopped.cancel_requested);
  EXPECT_THAT(message(id, "attempt-ended"), HasSubstr("ran past its job's time_limit of 600 s"));
  bool cancel_sent = false;
  for (const auto& a : outbox("alpha")) cancel_sent |= a.kind == ActionKind::cancel;
  EXPECT_TRUE(cancel_sent);

  // The site confirms it gone; it runs again from step 20 (no backoff after a stop for time).
  exits(stopped, std::nullopt, 15);
  handle(Tick{});
  ASSERT_EQ(attempts(id).size(), 2u);
  EXPECT_EQ(last_attempt(id).resumed_from_step, 20);
}

}  // namespace
}  // namespace orch::testing
