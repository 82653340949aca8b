// Issue 43, I/O stalls: the launch gives the agent a bound from the job's reported save times,
// the site's io_stall alerts raise one job event per save however many polls repeat them, and
// the cluster's scorecard counts them. The site's part is played with events, on a fake clock.
#include <gmock/gmock.h>

#include <cmath>

#include "scheduler/brain/cluster_history.h"
#include "scheduler/brain/io_stall.h"
#include "scheduler/health/scorecard.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

TEST(IoStallBound, NoBoundFromTheLaunchBeforeThreeSavesWereReported) {
  EXPECT_EQ(io_stall_after_s(CheckpointSpec{}, {}), 0);
  EXPECT_EQ(io_stall_after_s(CheckpointSpec{}, {30, 40}), 0);
}

TEST(IoStallBound, IsTheFactorTimesTheMedianSaveAndNeverBelowTheMinimum) {
  CheckpointSpec spec;                                          // stall_factor 5, stall_min_s 60
  EXPECT_DOUBLE_EQ(io_stall_after_s(spec, {30, 20, 40}), 150);  // 5 x 30
  EXPECT_DOUBLE_EQ(io_stall_after_s(spec, {1, 2, 3, 4}), 60);   // 5 x 2.5 is below a minute
  spec.stall_factor = 10;
  spec.stall_min_s = 1;
  EXPECT_DOUBLE_EQ(io_stall_after_s(spec, {0.2, 0.2, 0.4, 0.3}), 2.5);
}

TEST(IoStallBound, AFactorOfZeroGivesNoBoundAndNonsenseTimesAreLeftOut) {
  CheckpointSpec off;
  off.stall_factor = 0;
  EXPECT_EQ(io_stall_after_s(off, {30, 30, 30}), 0);
  EXPECT_EQ(io_stall_after_s(CheckpointSpec{}, {30, -1, std::nan("")}), 0);
}

class BrainIoStall : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha")}); }

  TaskAlert stall(std::int64_t step, const std::string& path, double running_s) {
    TaskAlert a;
    a.kind = "io_stall";
    a.node = "alpha-n0";
    a.step = step;
    a.path = path;
    a.fs = "nfs4";
    a.mount = "/checkpoints";
    a.running_s = running_s;
    a.after_s = 60;
    a.detail = "the save of step " + std::to_string(step) + " to " + path + " has run " +
               std::to_string(static_cast<int>(running_s)) + " s (bound 60 s) on nfs4 /checkpoints";
    return a;
  }
  void poll_with(const AttemptRow& a, std::vector<TaskAlert> alerts) {
    AttemptObserved e{a.cluster, a.token, RunPhase::running, std::nullopt, {}, {}, {}};
    e.alerts = std::move(alerts);
    handle(e);
  }
  std::vector<std::string> messages(JobId id, const std::string& kind) {
    std::vector<std::string> out;
    for (const auto& e : store->events_of(id).value()) {
      if (e.kind == kind) out.push_back(e.message);
    }
    return out;
  }
};

TEST_F(BrainIoStall, ASaveStalledOverManyPollsIsOneIoStallEventNamingPathAndFilesystem) {
  JobId id = submit(make_job().on({"alpha"}));
  site_launches_all("alpha");
  const AttemptRow a = last_attempt(id);
  const std::string path = ckpt_path(a, 40);
  for (double running : {61.0, 75.0, 90.0}) poll_with(a, {stall(40, path, running)});
  auto stalls = messages(id, "io-stall");
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_THAT(stalls[0], HasSubstr("io stall on alpha-n0: the save of step 40 to " + path));
  EXPECT_THAT(stalls[0], HasSubstr("on nfs4 /checkpoints"));
  // The next save's stall is another one.
  poll_with(a, {stall(50, ckpt_path(a, 50), 70)});
  EXPECT_EQ(messages(id, "io-stall").size(), 2u);
  EXPECT_EQ(store->io_stall_clusters_since(0).value(),
            (std::vector<std::string>{"alpha", "alpha"}));
}

TEST_F(BrainIoStall, TheClustersScorecardCountsItsIoStalls) {
  JobId id = submit(make_job().on({"alpha"}));
  site_launches_all("alpha");
  const AttemptRow a = last_attempt(id);
  poll_with(a, {stall(10, ckpt_path(a, 10), 70)});
  poll_with(a, {stall(20, ckpt_path(a, 20), 70)});
  auto inputs = gather_scorecard_inputs(*store, brain->clusters(), clock.now_ms(), 0);
  ASSERT_TRUE(inputs.ok()) << inputs.error().message;
  auto cards = compute_scorecards(*inputs);
  ASSERT_FALSE(cards.empty());
  EXPECT_EQ(cards[0].name, "alpha");
  EXPECT_EQ(cards[0].io_stalls, 2);
}

TEST_F(BrainIoStall, TheNextLaunchCarriesTheBoundFromTheJobsReportedSaves) {
  JobSpec spec = make_job().on({"alpha"}).backoff(0);
  spec.checkpoint.stall_factor = 10;
  spec.checkpoint.stall_min_s = 1;
  spec.restart.max_user_restarts = 1;
  JobId id = submit(spec);
  ASSERT_FALSE(outbox("alpha").empty());
  EXPECT_FALSE(outbox("alpha").at(0).payload.contains("io_stall_after_s"));  // nothing measured
  site_launches_all("alpha");
  const AttemptRow a = last_attempt(id);
  report(a,
         {CheckpointReport{10, ckpt_path(a, 10), 0.2}, CheckpointReport{20, ckpt_path(a, 20), 0.3},
          CheckpointReport{30, ckpt_path(a, 30), 0.25}});
  handle(AttemptObserved{
      a.cluster, a.token, RunPhase::exited, ExitStatus{1, std::nullopt, ""}, {}, {}, {}});
  clock.advance_ms(60'000);  // past the restart's backoff
  handle(Tick{});
  ASSERT_EQ(attempts(id).size(), 2u);
  auto launch = outbox("alpha").at(0);
  EXPECT_DOUBLE_EQ(launch.payload.value("io_stall_after_s", 0.0), 2.5);  // 10 x 0.25 s
}

}  // namespace
}  // namespace orch::testing
