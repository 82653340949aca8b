// Checkpoint paths a job reports are confined to its own checkpoint directory (issue 37): a line
// naming another job's directory, or leading out of its own through "..", is a
// `bad-progress-line` event and registers nothing (no checkpoint, no copy, no listing, nothing
// to copy or delete); a copy the site finds outside (a symbolic link out) is refused for good,
// and retention never deletes it; listings and deletions carry the directory the site checks.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

class BrainConfinement : public BrainFixture {
 protected:
  void SetUp() override {
    instant_data = false;
    start({make_cluster("alpha").storage("/data/alpha"), make_cluster("beta").storage("/data/b")});
  }

  void checkpoint_line(const AttemptRow& a, std::int64_t step, const std::string& path) {
    report(a, {ProgressReport{step, 1000, 0.5, std::nullopt}, CheckpointReport{step, path, 0.1}});
  }

  std::vector<OutboxRow> storage_actions(const std::string& cluster) {
    std::vector<OutboxRow> out;
    for (const auto& a : outbox(cluster)) {
      if (a.kind == ActionKind::manifest || a.kind == ActionKind::remove) out.push_back(a);
    }
    return out;
  }

  std::vector<std::string> events_of_kind(JobId id, const std::string& kind) {
    std::vector<std::string> out;
    for (const auto& e : store->events_of(id).value()) {
      if (e.kind == kind) out.push_back(e.message);
    }
    return out;
  }

  std::vector<ReplicaRow> copies_of(JobId id) { return store->replicas_of_job(id).value(); }

  // The site lists every pending copy faithfully; the transfer worker copies every transfer.
  void list_and_copy_all() {
    for (int round = 0; round < 5; ++round) {
      for (const std::string c : {"alpha", "beta"}) {
        for (const auto& act : outbox(c)) {
          if (act.kind != ActionKind::manifest) continue;
          handle(ManifestCompleted{act.id, c, act.payload,
                                   fake_manifest(act.payload.value("path", std::string()))});
        }
      }
      for (const auto& t : store->transfers(true, 100).value()) {
        if (t.state != TransferState::queued) continue;
        handle(TransferProgressed{t.id, TransferProgress{}});
        handle(TransferFinished{t.id, TransferOutcome{1000, 1.0, "local", 0}});
      }
    }
  }
};

TEST_F(BrainConfinement, EachAttemptRecordsItsJobsOwnDirectory) {
  JobId a = submit(make_job().name("a").on({"alpha"}));
  JobId b = submit(make_job().name("b").on({"alpha"}));
  site_launches_all("alpha");
  EXPECT_EQ(last_attempt(a).checkpoint_dir, "/data/alpha/checkpoints/job-" + std::to_string(a));
  EXPECT_EQ(last_attempt(b).checkpoint_dir, "/data/alpha/checkpoints/job-" + std::to_string(b));
}

TEST_F(BrainConfinement, ALineOutsideTheJobsDirectoryRegistersNothing) {
  JobId a = submit(make_job().name("a").on({"alpha"}));
  JobId b = submit(make_job().name("b").on({"alpha"}).replicate(1, 2, "beta"));
  site_launches_all("alpha");
  const AttemptRow victim = last_attempt(a);
  const AttemptRow attacker = last_attempt(b);
  train(victim, 1, 10);  // A's real checkpoint
  const std::size_t a_actions = storage_actions("alpha").size();

  const std::string theirs = victim.checkpoint_dir + "/step-10";
  for (const std::string& path :
       {theirs, victim.checkpoint_dir, attacker.checkpoint_dir + "/../job-" + std::to_string(a),
        attacker.checkpoint_dir + "/x/../../job-" + std::to_string(a) + "/step-10",
        attacker.checkpoint_dir, attacker.checkpoint_dir + "0/step-1", std::string("step-1"),
        std::string("/etc")}) {
    checkpoint_line(attacker, 1, path);
  }

  EXPECT_TRUE(store->checkpoints_of(b).value().empty()) << "nothing registered";
  EXPECT_TRUE(copies_of(b).empty());
  EXPECT_EQ(storage_actions("alpha").size(), a_actions) << "nothing listed or deleted";
  EXPECT_TRUE(storage_actions("beta").empty()) << "nothing copied";
  EXPECT_TRUE(store->transfers(false, 100).value().empty());
  const auto bad = events_of_kind(b, "bad-progress-line");
  ASSERT_EQ(bad.size(), 8u);
  EXPECT_NE(bad[0].find("is outside the checkpoint directory " + attacker.checkpoint_dir),
            std::string::npos)
      << bad[0];
  EXPECT_NE(bad[0].find("$ORCH_CHECKPOINT_DIR"), std::string::npos) << bad[0];
  EXPECT_NE(bad[4].find("itself"), std::string::npos) << bad[4];
  EXPECT_NE(bad[6].find("not absolute"), std::string::npos) << bad[6];
  EXPECT_TRUE(events_of_kind(b, "checkpoint").empty());
  // A's checkpoint is untouched: one copy, A's own.
  ASSERT_EQ(copies_of(a).size(), 1u);
  EXPECT_EQ(copies_of(a)[0].path, theirs);
}

TEST_F(BrainConfinement, RefusalsPerObservationAreBounded) {
  JobId b = submit(make_job().name("b").on({"alpha"}));
  site_launches_all("alpha");
  std::vector<ProgressLine> lines;
  for (int i = 1; i <= 50; ++i)
    lines.push_back(CheckpointReport{i, "/elsewhere/" + std::to_string(i), 0.1});
  report(last_attempt(b), std::move(lines));
  EXPECT_EQ(events_of_kind(b, "bad-progress-line").size(), 3u);
  EXPECT_TRUE(store->checkpoints_of(b).value().empty());
}

TEST_F(BrainConfinement, APathInsideIsRegisteredInNormalFormAndListedWithItsDirectory) {
  JobId b = submit(make_job().name("b").on({"alpha"}));
  site_launches_all("alpha");
  const AttemptRow a = last_attempt(b);
  checkpoint_line(a, 10, a.checkpoint_dir + "//run/./x/../step-10/");

  auto ckpts = store->checkpoints_of(b).value();
  ASSERT_EQ(ckpts.size(), 1u);
  EXPECT_EQ(ckpts[0].path, a.checkpoint_dir + "/run/step-10");
  ASSERT_EQ(copies_of(b).size(), 1u);
  EXPECT_EQ(copies_of(b)[0].confined_to, a.checkpoint_dir);
  auto actions = storage_actions("alpha");
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].payload.value("path", ""), a.checkpoint_dir + "/run/step-10");
  EXPECT_EQ(actions[0].payload.value("within", ""), a.checkpoint_dir);
}

TEST_F(BrainConfinement, ACopyTheSiteFindsOutsideIsRefusedForGoodAndNeverDeleted) {
  JobId b = submit(make_job().name("b").on({"alpha"}).replicate(1, 1));
  site_launches_all("alpha");
  const AttemptRow a = last_attempt(b);
  // step-10 is a link the job made to another user's directory: the site says so.
  checkpoint_line(a, 10, a.checkpoint_dir + "/step-10");
  const auto listing = storage_actions("alpha").at(0);
  handle(ManifestCompleted{
      listing.id, "alpha", listing.payload,
      make_error(ErrorKind::forbidden, "site alpha: refusing to list ...: it resolves outside")});
  ASSERT_EQ(copies_of(b).size(), 1u);
  EXPECT_EQ(copies_of(b)[0].state, ReplicaState::refused);
  const auto bad = events_of_kind(b, "bad-progress-line");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("is not registered"), std::string::npos) << bad[0];
  EXPECT_NE(bad[0].find("resolves outside"), std::string::npos) << bad[0];

  // Newer real checkpoints, and retention keeping one: the refused copy is never deleted, nor
  // listed again (by the audit or otherwise).
  for (int step : {20, 30}) {
    checkpoint_line(a, step, a.checkpoint_dir + "/step-" + std::to_string(step));
    for (const auto& act : storage_actions("alpha")) {
      if (act.kind != ActionKind::manifest) continue;
      handle(ManifestCompleted{act.id, "alpha", act.payload,
                               fake_manifest(act.payload.value("path", std::string()))});
    }
  }
  handle(StartAudit{});
  for (const auto& act : outbox("alpha")) {
    EXPECT_NE(act.payload.value("path", ""), a.checkpoint_dir + "/step-10")
        << to_string(act.kind) << " of the refused copy";
    if (act.kind == ActionKind::remove) {
      EXPECT_EQ(act.payload.value("within", ""), a.checkpoint_dir);
    }
  }
  for (const auto& r : copies_of(b)) {
    if (r.path == a.checkpoint_dir + "/step-10") {
      EXPECT_EQ(r.state, ReplicaState::refused);
    }
    if (r.path == a.checkpoint_dir + "/step-20") {
      EXPECT_EQ(r.state, ReplicaState::deleted);
    }
  }
  EXPECT_EQ(events_of_kind(b, "checkpoint-deleted").size(), 1u) << "step 20 only";
}

TEST_F(BrainConfinement, ACandidateTheCheckBeforeALaunchFindsOutsideIsRefused) {
  JobId id = submit(make_job().on({"alpha"}).replicate(3, 1).backoff(1));
  site_launches_all("alpha");
  const AttemptRow first = last_attempt(id);
  train(first, 1, 20);
  list_and_copy_all();
  exits(first, std::nullopt, 9);  // killed: resumes on alpha
  clock.advance_ms(1000);
  handle(Tick{});
  auto launch = outbox("alpha").at(0);
  ASSERT_EQ(launch.kind, ActionKind::launch);
  const auto& candidates = launch.payload["resume_candidates"];
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].value("within", ""), first.checkpoint_dir) << "the site checks it";

  // The worker's check: step 20 became a link out of the job's directory.
  ResumeChoice choice;
  choice.checkpoint_id = candidates[1]["checkpoint_id"].get<std::int64_t>();
  choice.step = 10;
  choice.path = ckpt_path(first, 10);
  choice.rejected.push_back({candidates[0]["checkpoint_id"].get<std::int64_t>(), 20, false,
                             "it resolves outside " + first.checkpoint_dir, true});
  handle(LaunchCompleted{launch.id, launch.token, LaunchResult{"site-2", {"alpha-n0"}}, false,
                         choice});
  for (const auto& r : copies_of(id)) {
    if (r.path == ckpt_path(first, 20)) {
      EXPECT_EQ(r.state, ReplicaState::refused);
    }
    if (r.path == ckpt_path(first, 10)) {
      EXPECT_EQ(r.state, ReplicaState::verified);
    }
  }
  ASSERT_EQ(events_of_kind(id, "checkpoint-refused").size(), 1u);
  EXPECT_NE(events_of_kind(id, "checkpoint-refused")[0].find("never listed, copied or deleted"),
            std::string::npos);
}

TEST_F(BrainConfinement, RetentionDeletesOnlyInsideTheDirectoryOfEachCopy) {
  JobId b = submit(make_job().name("b").on({"alpha"}).replicate(1, 2, "beta"));
  site_launches_all("alpha");
  const AttemptRow a = last_attempt(b);
  train(a, 1, 10);
  list_and_copy_all();
  train(a, 11, 20, 10);
  list_and_copy_all();
  std::vector<OutboxRow> removes;
  for (const std::string c : {"alpha", "beta"}) {
    for (const auto& act : outbox(c)) {
      if (act.kind == ActionKind::remove) removes.push_back(act);
    }
  }
  ASSERT_EQ(removes.size(), 2u) << "step 10 at both sites";
  for (const auto& r : removes) {
    const std::string within = r.payload.value("within", "");
    const std::string path = r.payload.value("path", "");
    if (r.cluster == "alpha") {
      EXPECT_EQ(within, a.checkpoint_dir);
    }
    if (r.cluster == "beta") {
      EXPECT_EQ(within, "/data/b/checkpoints/.orchestrate/replicas/job-" + std::to_string(b));
    }
    EXPECT_EQ(path.rfind(within + "/", 0), 0u) << path << " in " << within;
  }
}

}  // namespace
}  // namespace orch::testing
