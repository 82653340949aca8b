// Resume weighs what it would lose (issue 15): when a newer checkpoint is verified at another
// site, the steps an older local one would redo (at the job's measured step time) are weighed
// against copying the newer one (its size over the measured bandwidth). A small newer copy is
// staged first, even when the launch's own check is the one to find the local copy missing; a
// huge one over a slow link is not waited for. The sites' storage and transfers are played by
// hand (instant_data off).
#include <gmock/gmock.h>

#include "scheduler/model/launch_request_json.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainResumeWeighing : public BrainFixture {
 protected:
  void SetUp() override { instant_data = false; }

  // Every pending listing at `cluster`, answered by `storage` (the fake copy by default).
  void answer_listings(const std::string& cluster,
                       const std::function<Result<Manifest>(const std::string&)>& storage) {
    for (const auto& a : outbox(cluster)) {
      if (a.kind != ActionKind::manifest) continue;
      handle(ManifestCompleted{a.id, cluster, a.payload,
                               storage(a.payload.value("path", std::string()))});
    }
  }
  static Result<Manifest> faithful(const std::string& path) { return fake_manifest(path); }
  // Step 20 is 100 GB.
  static Result<Manifest> huge_20(const std::string& path) {
    Manifest m = fake_manifest(path);
    if (path.size() >= 7 && path.compare(path.size() - 7, 7, "step-20") == 0) {
      m.files[0].size = 100'000'000'000ULL;
    }
    return m;
  }
  std::optional<ReplicaState> state_at(JobId job, std::int64_t step, const std::string& cluster) {
    for (const auto& c : store->checkpoints_of(job).value()) {
      if (c.step != step) continue;
      for (const auto& r : store->replicas_of_checkpoint(c.id).value()) {
        if (r.cluster == cluster) return r.state;
      }
    }
    return std::nullopt;
  }
  std::optional<OutboxRow> launch_at(const std::string& cluster) {
    for (const auto& a : outbox(cluster)) {
      if (a.kind == ActionKind::launch) return a;
    }
    return std::nullopt;
  }
  std::vector<std::string> messages(JobId id, const std::string& kind) {
    std::vector<std::string> out;
    for (const auto& e : events_of_kind(id, kind)) out.push_back(e.message);
    return out;
  }

  // A job on alpha (preferred) trains 20 steps in 10 s, 0.5 s a step, with checkpoints at 10 and
  // 20; both are verified at alpha and replicated to beta. Each copy to beta moves `copy_bytes`
  // in `copy_s` (what the bandwidth is measured from); listings are answered by `storage`.
  JobId trained_and_replicated(std::uint64_t copy_bytes, double copy_s,
                               const std::function<Result<Manifest>(const std::string&)>& storage) {
    start({make_cluster("alpha").audit_every_s(5), make_cluster("beta").audit_every_s(5)});
    JobId id = submit(make_job().gpus(4).replicate(3, 2, "beta").prefer({"alpha"}).backoff(0));
    site_launches_all("alpha");
    clock.advance_ms(10'000);
    train(last_attempt(id), 1, 20);
    answer_listings("alpha", storage);
    for (int round = 0; round < 4; ++round) {  // copies start one after another
      for (const auto& t : store->transfers(true, 100).value()) {
        if (t.state != TransferState::queued && t.state != TransferState::running) continue;
        handle(TransferProgressed{t.id, TransferProgress{}});
        handle(TransferFinished{t.id, TransferOutcome{copy_bytes, copy_s, "test", 0}});
      }
      answer_listings("beta", storage);
    }
    EXPECT_EQ(state_at(id, 20, "beta"), ReplicaState::verified);
    return id;
  }
};

TEST_F(BrainResumeWeighing, ASmallNewerCopyIsStagedWhenTheLaunchsCheckFindsTheLocalOneGone) {
  JobId id = trained_and_replicated(1000, 1.0, faithful);
  exits(last_attempt(id), std::nullopt, 9);  // killed: resumes on alpha
  handle(Tick{});
  const OutboxRow launch = launch_at("alpha").value();
  const LaunchRequest req = launch_request_from_json(launch.payload).value();
  ASSERT_EQ(req.resume_candidates.size(), 2u);
  // Redoing even one step (0.5 s) loses more than copying 1 kB: nothing below step 20.
  EXPECT_EQ(req.resume_floor_step, 20);
  EXPECT_THAT(req.resume_floor_reason, HasSubstr("step 20 is held at beta"));
  const int restarts = store->job(id).value()->infra_restarts;

  // The worker's check: step 20 is gone from alpha, step 10 passes; 10 is below the floor, so
  // nothing is launched and the launch comes back.
  ResumeChoice choice;
  choice.checkpoint_id = req.resume_candidates[1].checkpoint_id;
  choice.step = 10;
  choice.path = req.resume_candidates[1].path;
  choice.rejected.push_back({req.resume_candidates[0].checkpoint_id, 20, true, "not there"});
  choice.bounced = true;
  handle(LaunchCompleted{launch.id, launch.token,
                         make_error(ErrorKind::conflict, "not launched: below the floor"), false,
                         choice});
  handle(Tick{});

  EXPECT_EQ(attempts(id).at(1).cause, ExitCause::cancelled);
  EXPECT_EQ(store->job(id).value()->infra_restarts, restarts) << "a bounce costs no restart";
  ASSERT_EQ(messages(id, "resume-bounced").size(), 1u);
  EXPECT_THAT(messages(id, "resume-bounced")[0], HasSubstr("below the floor"));
  // Step 20 is copied back from beta and the job waits for it.
  EXPECT_EQ(state_at(id, 20, "alpha"), ReplicaState::copying);
  EXPECT_EQ(store->job(id).value()->state, JobState::staging);
  auto weighed = messages(id, "resume-weighed");
  ASSERT_EQ(weighed.size(), 1u);
  EXPECT_EQ(weighed[0],
            "waiting for step 20 from beta at alpha: resuming from step 10 redoes 10 steps "
            "(~5.0 s at 0.50 s/step); copying step 20 (0.0 MB) takes ~0.0 s");
  EXPECT_FALSE(launch_at("alpha").has_value());

  // It lands and is verified: the next launch resumes from it.
  auto copying = store->transfers(true, 100).value();
  ASSERT_EQ(copying.size(), 1u);
  EXPECT_EQ(copying[0].dst_cluster, "alpha");
  handle(TransferProgressed{copying[0].id, TransferProgress{}});
  handle(TransferFinished{copying[0].id, TransferOutcome{1000, 1.0, "test", 0}});
  answer_listings("alpha", faithful);
  handle(Tick{});
  const LaunchRequest next = launch_request_from_json(launch_at("alpha").value().payload).value();
  ASSERT_FALSE(next.resume_candidates.empty());
  EXPECT_EQ(next.resume_candidates[0].step, 20);
  EXPECT_EQ(messages(id, "resume-weighed").size(), 1u) << "said once per copy";
}

TEST_F(BrainResumeWeighing, AHugeNewerCopyOverASlowLinkIsNotWaitedFor) {
  // 100 GB at the measured 1 MB/s is a day; redoing 10 steps is 5 s.
  JobId id = trained_and_replicated(100'000'000'000ULL, 100'000, huge_20);
  // An audit finds alpha's copy of step 20 gone; it is being copied back from beta.
  handle(Tick{});
  clock.advance_ms(5'000);
  handle(Tick{});
  answer_listings("alpha", [](const std::string& p) -> Result<Manifest> {
    if (p.find("step-20") != std::string::npos) {
      return make_error(ErrorKind::not_found, p + " does not exist at the site");
    }
    return huge_20(p);
  });
  ASSERT_EQ(state_at(id, 20, "alpha"), ReplicaState::copying);

  exits(last_attempt(id), std::nullopt, 9);
  handle(Tick{});
  auto launch = launch_at("alpha");
  ASSERT_TRUE(launch.has_value()) << "the job does not wait a day for the copy";
  const LaunchRequest req = launch_request_from_json(launch->payload).value();
  ASSERT_FALSE(req.resume_candidates.empty());
  EXPECT_EQ(req.resume_candidates[0].step, 10);
  EXPECT_EQ(req.resume_floor_step, std::nullopt) << "no older step loses more than the copy";
  auto weighed = messages(id, "resume-weighed");
  ASSERT_EQ(weighed.size(), 1u);
  EXPECT_THAT(weighed[0], HasSubstr("resuming at alpha without step 20 from beta: resuming from "
                                    "step 10 redoes 10 steps (~5.0 s at 0.50 s/step); copying "
                                    "step 20 (100000.0 MB) takes ~100000 s"));
}

}  // namespace
}  // namespace orch::testing
