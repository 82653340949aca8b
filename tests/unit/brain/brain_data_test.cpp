// The brain's data plane (issue 5): a reported checkpoint is listed where it was saved, verified,
// copied off-site and verified there; failed copies retry; audits find lost copies and
// re-replicate them; the pre-launch check's verdicts are recorded; transfers are throttled by
// the MFU of the jobs beside them; datasets are staged before a job starts. The sites' storage
// and the transfer worker are played by hand here (instant_data off).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "scheduler/data/staging.h"
#include "scheduler/store/sqlite_db.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

class BrainData : public BrainFixture {
 protected:
  void SetUp() override { instant_data = false; }

  // Answers every pending listing at `cluster` with what `storage` says of its path.
  int answer_listings(
      const std::string& cluster,
      const std::function<Result<Manifest>(const std::string&)>& storage =
          [](const std::string& p) -> Result<Manifest> { return fake_manifest(p); }) {
    int answered = 0;
    for (const auto& a : outbox(cluster)) {
      if (a.kind != ActionKind::manifest) continue;
      handle(ManifestCompleted{a.id, cluster, a.payload,
                               storage(a.payload.value("path", std::string()))});
      ++answered;
    }
    return answered;
  }

  std::vector<TransferRow> transfers() { return store->transfers(false, 100).value(); }
  std::vector<TransferRow> active_transfers() { return store->transfers(true, 100).value(); }

  void copy_succeeds(const TransferRow& t) {
    handle(TransferProgressed{t.id, TransferProgress{}});
    handle(TransferFinished{t.id, TransferOutcome{1000, 2.0, "local", 0}});
  }

  std::vector<ReplicaRow> copies_of_step(JobId job, std::int64_t step) {
    std::vector<ReplicaRow> out;
    for (const auto& c : store->checkpoints_of(job).value()) {
      if (c.step != step) continue;
      for (const auto& r : store->replicas_of_checkpoint(c.id).value()) out.push_back(r);
    }
    return out;
  }

  std::optional<ReplicaState> state_at(JobId job, std::int64_t step, const std::string& cluster) {
    for (const auto& r : copies_of_step(job, step)) {
      if (r.cluster == cluster) return r.state;
    }
    return std::nullopt;
  }
};

TEST_F(BrainData, AReportedCheckpointIsVerifiedWhereItWasSavedThenCopiedOffSiteAndVerifiedThere) {
  start({make_cluster("alpha").storage("/a"), make_cluster("beta").storage("/b")});
  JobId id = submit(make_job().replicate(3, 2, "beta"));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 10);

  EXPECT_EQ(state_at(id, 10, "alpha"), ReplicaState::present);
  EXPECT_TRUE(active_transfers().empty()) << "nothing is copied before it is verified";
  ASSERT_EQ(answer_listings("alpha"), 1);
  EXPECT_EQ(state_at(id, 10, "alpha"), ReplicaState::verified);
  EXPECT_EQ(events_of_kind(id, "checkpoint-verified").size(), 1u);

  auto t = active_transfers();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].src_cluster, "alpha");
  EXPECT_EQ(t[0].src_path, "/a/checkpoints/job-1/step-10");
  EXPECT_EQ(t[0].dst_cluster, "beta");
  EXPECT_EQ(t[0].dst_path, "/b/checkpoints/.orchestrate/replicas/job-1/step-10/step-10");
  EXPECT_EQ(state_at(id, 10, "beta"), ReplicaState::copying);

  copy_succeeds(t[0]);
  EXPECT_EQ(store->transfer(t[0].id).value()->state, TransferState::verifying);
  ASSERT_EQ(answer_listings("beta"), 1);
  EXPECT_EQ(state_at(id, 10, "beta"), ReplicaState::verified);
  EXPECT_EQ(store->transfer(t[0].id).value()->state, TransferState::done);
  ASSERT_EQ(events_of_kind(id, "checkpoint-replicated").size(), 1u);
  EXPECT_NE(events_of_kind(id, "checkpoint-replicated")[0].message.find("copied to beta"),
            std::string::npos);
}

TEST_F(BrainData, AListingWithAnUnknownPurposeIsSaidAndLetGoNotIgnoredOrRetried) {
  start({make_cluster("alpha").storage("/a")});
  JobId id = submit(make_job().replicate(3, 1));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 10);
  auto actions = outbox("alpha");
  auto listing = std::find_if(actions.begin(), actions.end(),
                              [](const OutboxRow& a) { return a.kind == ActionKind::manifest; });
  ASSERT_NE(listing, actions.end());
  nlohmann::json payload = listing->payload;
  payload["purpose"] = "reckon";
  handle(ManifestCompleted{listing->id, "alpha", payload,
                           fake_manifest(payload.value("path", std::string()))});

  for (const auto& a : outbox("alpha")) EXPECT_NE(a.id, listing->id) << "the action is done";
  EXPECT_EQ(state_at(id, 10, "alpha"), ReplicaState::present) << "and nothing else was decided";
  auto st = store->db().prepare("SELECT message FROM events WHERE kind = 'bad-action'");
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE(st->step().value());
  EXPECT_NE(st->col_text(0).find("unknown purpose \"reckon\""), std::string::npos)
      << st->col_text(0);
}

TEST_F(BrainData, ACopyThatDoesNotMatchItsSourceIsCopiedAgainComparingChecksums) {
  start({make_cluster("alpha"), make_cluster("beta")});
  JobId id = submit(make_job().replicate(3, 2, "beta"));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 10);
  answer_listings("alpha");
  auto t = active_transfers().at(0);
  copy_succeeds(t);
  answer_listings("beta", [](const std::string& p) -> Result<Manifest> {
    Manifest m = fake_manifest(p);
    m.files[0].size += 1;
    return m;
  });
  EXPECT_EQ(state_at(id, 10, "beta"), ReplicaState::corrupt);
  TransferRow again = store->transfer(t.id).value().value();
  EXPECT_EQ(again.state, TransferState::queued);
  ASSERT_TRUE(again.next_try_ms.has_value());
  EXPECT_GT(*again.next_try_ms, clock.now_ms());
  EXPECT_EQ(events_of_kind(id, "transfer-verify-failed").size(), 1u);
}

TEST_F(BrainData, AFailedCopyIsRetriedWithBackoffAndGivenUpAfterItsTries) {
  start({make_cluster("alpha"), make_cluster("beta")});
  JobId id = submit(make_job().replicate(3, 2, "beta"));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 10);
  answer_listings("alpha");
  const std::int64_t tid = active_transfers().at(0).id;
  Millis previous_delay = 0;
  for (int i = 1; i <= kTransferMaxTries; ++i) {
    handle(TransferProgressed{tid, TransferProgress{}});
    handle(
        TransferFinished{tid, make_error(ErrorKind::io, "rsync: connection unexpectedly closed")});
    TransferRow t = store->transfer(tid).value().value();
    EXPECT_EQ(t.tries, i);
    if (i < kTransferMaxTries) {
      ASSERT_EQ(t.state, TransferState::queued);
      const Millis delay = *t.next_try_ms - clock.now_ms();
      EXPECT_GE(delay, previous_delay) << "try " << i;
      previous_delay = delay;
      clock.advance_ms(delay);
    } else {
      EXPECT_EQ(t.state, TransferState::failed);
    }
  }
  EXPECT_EQ(state_at(id, 10, "beta"), ReplicaState::missing);
  EXPECT_EQ(events_of_kind(id, "transfer-retry").size(),
            static_cast<std::size_t>(kTransferMaxTries - 1));
  EXPECT_EQ(events_of_kind(id, "transfer-failed").size(), 1u);
}

TEST_F(BrainData, TheAuditFindsALostCopyAndReReplicatesItFromTheSurvivingOne) {
  start({make_cluster("alpha").audit_every_s(60), make_cluster("beta").audit_every_s(60)});
  JobId id = submit(make_job().replicate(3, 2, "beta"));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 10);
  answer_listings("alpha");
  copy_succeeds(active_transfers().at(0));
  answer_listings("beta");
  ASSERT_EQ(state_at(id, 10, "beta"), ReplicaState::verified);

  handle(Tick{});  // starts the audit clock
  clock.advance_ms(60'000);
  handle(Tick{});
  // alpha's copy is gone (a provider deleted the directory).
  ASSERT_EQ(answer_listings("alpha",
                            [](const std::string& p) -> Result<Manifest> {
                              return make_error(ErrorKind::not_found,
                                                p + " does not exist at the site");
                            }),
            1);
  // Marked missing, and at once being copied back from beta.
  EXPECT_EQ(state_at(id, 10, "alpha"), ReplicaState::copying);
  ASSERT_EQ(events_of_kind(id, "checkpoint-lost").size(), 1u);
  EXPECT_NE(events_of_kind(id, "checkpoint-lost")[0].message.find("alpha is missing"),
            std::string::npos);

  auto t = active_transfers();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].src_cluster, "beta");
  EXPECT_EQ(t[0].dst_cluster, "alpha");
  EXPECT_EQ(t[0].dst_path, ckpt_path(attempts(id).front(), 10)) << "back where the job wrote it";
}

TEST_F(BrainData, RetentionDeletesOldCheckpointsOnlyOnceTheNewestIsHeldOffSite) {
  start({make_cluster("alpha"), make_cluster("beta")});
  JobId id = submit(make_job().replicate(1, 2, "beta"));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 10);
  answer_listings("alpha");
  copy_succeeds(active_transfers().at(0));
  answer_listings("beta");

  train(last_attempt(id), 11, 20, 10);
  answer_listings("alpha");
  EXPECT_EQ(state_at(id, 10, "alpha"), ReplicaState::verified)
      << "step 20 is not yet held off-site, so step 10 stays";
  copy_succeeds(active_transfers().at(0));
  answer_listings("beta");
  EXPECT_EQ(state_at(id, 20, "beta"), ReplicaState::verified);
  EXPECT_EQ(state_at(id, 10, "alpha"), ReplicaState::deleted);
  EXPECT_EQ(state_at(id, 10, "beta"), ReplicaState::deleted);
  int removals = 0;
  for (const std::string c : {"alpha", "beta"}) {
    for (const auto& a : outbox(c)) removals += a.kind == ActionKind::remove ? 1 : 0;
  }
  EXPECT_EQ(removals, 2);
}

TEST_F(BrainData, ACorruptNewestCheckpointFoundBeforeLaunchIsMarkedAndThePreviousOneUsed) {
  start({make_cluster("alpha")});
  JobId id = submit(make_job().replicate(3, 1).backoff(1));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 20);
  answer_listings("alpha");
  exits(last_attempt(id), std::nullopt, 9);  // killed: resumes on alpha
  clock.advance_ms(1000);
  handle(Tick{});
  auto launch = outbox("alpha").at(0);
  ASSERT_EQ(launch.kind, ActionKind::launch);
  ASSERT_EQ(launch.payload["resume_candidates"].size(), 2u);
  EXPECT_EQ(launch.payload["resume_candidates"][0]["step"], 20);

  // The worker's check: step 20 has a changed byte, step 10 matches.
  ResumeChoice choice;
  choice.checkpoint_id =
      launch.payload["resume_candidates"][1]["checkpoint_id"].get<std::int64_t>();
  choice.step = 10;
  choice.path = ckpt_path(attempts(id).front(), 10);
  choice.rejected.push_back(
      {launch.payload["resume_candidates"][0]["checkpoint_id"].get<std::int64_t>(), 20, false,
       "the file: SHA-256 0123456789ab…, expected 73746570…"});
  handle(LaunchCompleted{launch.id, launch.token, LaunchResult{"site-2", {"alpha-n0"}}, false,
                         choice});
  EXPECT_EQ(last_attempt(id).resumed_from_step, 10);
  EXPECT_EQ(state_at(id, 20, "alpha"), ReplicaState::corrupt);
  auto checked = events_of_kind(id, "resume-checked");
  ASSERT_EQ(checked.size(), 1u);
  EXPECT_NE(checked[0].message.find("from step 10"), std::string::npos) << checked[0].message;
  EXPECT_NE(checked[0].message.find("not from step 20"), std::string::npos) << checked[0].message;
}

TEST_F(BrainData, ATransferBesideAJobWhoseMfuDropsIsCutThenRaisedBackWhenItRecovers) {
  start({make_cluster("alpha").bwlimit_mb_s(40).throttle_interval_s(5),
         make_cluster("beta").bwlimit_mb_s(40).throttle_interval_s(5)});
  JobId id = submit(make_job().replicate(3, 2, "beta"));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 30, 30);  // a baseline, and a checkpoint at 30
  answer_listings("alpha");
  TransferRow t = active_transfers().at(0);
  EXPECT_DOUBLE_EQ(t.cap_bps, 40e6);
  handle(TransferProgressed{t.id, TransferProgress{1000, 100000, 30e6, 1, 40e6, "local"}});

  train(last_attempt(id), 31, 40, 0, 1000, 0.6);  // 17% slower: MFU drops
  handle(Tick{});
  t = store->transfer(t.id).value().value();
  EXPECT_DOUBLE_EQ(t.cap_bps, 20e6);
  ASSERT_EQ(events_of_kind(id, "transfer-throttled").size(), 1u);

  clock.advance_ms(1000);
  handle(Tick{});
  EXPECT_DOUBLE_EQ(store->transfer(t.id).value()->cap_bps, 20e6) << "one change per interval";

  train(last_attempt(id), 41, 50, 0);  // back to its baseline
  for (int i = 0; i < 5; ++i) {
    clock.advance_ms(5000);
    handle(Tick{});
  }
  EXPECT_DOUBLE_EQ(store->transfer(t.id).value()->cap_bps, 40e6);
  EXPECT_EQ(events_of_kind(id, "transfer-unthrottled").size(), 5u);  // +4 MB/s each
}

TEST_F(BrainData, AJobWaitsInStagingWhileItsDatasetIsCopiedThenStartsWithItsPath) {
  start({make_cluster("alpha").storage("/a")});
  ASSERT_TRUE(brain->handle(RegisterDataset{"c4", "alpha", "/data/c4"}).ok());
  answer_listings("alpha");
  JobId id = submit(make_job().datasets({"c4"}));
  // Already verified where it runs: no staging.
  EXPECT_EQ(job(id).state, JobState::placed);
  auto launch = outbox("alpha").at(0);
  EXPECT_EQ(launch.payload["env"]["ORCH_DATASET_C4"], "/data/c4");
}

TEST_F(BrainData, AJobPlacedWhereItsDatasetIsMissingStagesItFirst) {
  start({make_cluster("alpha").storage("/a"), make_cluster("beta").storage("/b")});
  ASSERT_TRUE(brain->handle(RegisterDataset{"c4", "alpha", "/data/c4"}).ok());
  answer_listings("alpha");
  JobId id = submit(make_job().datasets({"c4"}).on({"beta"}));
  EXPECT_EQ(job(id).state, JobState::staging);
  EXPECT_NE(job(id).reason.find("dataset c4 is being copied from alpha to beta"), std::string::npos)
      << job(id).reason;
  auto t = active_transfers();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].dst_path, "/b/datasets/c4");
  handle(Tick{});
  EXPECT_EQ(job(id).state, JobState::staging);
  copy_succeeds(t[0]);
  answer_listings("beta");
  handle(Tick{});
  EXPECT_EQ(job(id).state, JobState::placed);
  auto launch = outbox("beta").at(0);
  EXPECT_EQ(launch.payload["env"]["ORCH_DATASET_C4"], "/b/datasets/c4");
}

TEST_F(BrainData, DataCommandsRefuseWhatCannotBeDone) {
  start({make_cluster("alpha"), make_cluster("kube").provider("unlisted")});
  EXPECT_EQ(brain->handle(RegisterDataset{"bad name", "alpha", "/d"}).error().kind,
            ErrorKind::invalid);
  EXPECT_EQ(brain->handle(RegisterDataset{"c4", "gamma", "/d"}).error().kind, ErrorKind::not_found);
  EXPECT_EQ(brain->handle(RegisterDataset{"c4", "alpha", "rel/d"}).error().kind,
            ErrorKind::invalid);
  EXPECT_EQ(brain->handle(RegisterDataset{"c4", "kube", "/d"}).error().kind,
            ErrorKind::unsupported);
  EXPECT_EQ(brain->handle(ReplicateData{"nope", 0, "alpha"}).error().kind, ErrorKind::not_found);
  JobId id = submit(make_job());
  EXPECT_EQ(brain->handle(ReplicateData{"", id, "alpha"}).error().kind, ErrorKind::conflict);
  EXPECT_EQ(brain->handle(StartAudit{"gamma"}).error().kind, ErrorKind::not_found);
}

}  // namespace
}  // namespace orch::testing
