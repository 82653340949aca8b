// The store: transactions, refused transitions, the outbox, and durability across reopen.
#include <gmock/gmock.h>

#include <filesystem>
#include <stdexcept>

#include "scheduler/store/store.h"
#include "tests/harness/builders.h"
#include "tests/unit/store/store_rows.h"

namespace orch {
namespace {

using testing::make_job;

JobRow new_job(Millis now = 1000) {
  return testing::new_job_row(now);
}

AttemptRow first_attempt(JobId job, const std::string& token, const std::string& cluster = "alpha",
                         int gpus = 1) {
  return testing::first_attempt_row(job, token, cluster, gpus);
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { store = std::move(Store::open(":memory:").value()); }

  // A new job with one attempt on alpha, as stored.
  AttemptRow add_attempt(const std::string& token) {
    const JobId job = store->insert_job(new_job()).value();
    AttemptRow a = first_attempt(job, token);
    a.id = store->insert_attempt(a).value();
    return a;
  }

  std::unique_ptr<Store> store;
};

TEST_F(StoreTest, JobRoundTripsWithItsSpec) {
  JobRow j = new_job();
  j.spec.env["A"] = "b";
  JobId id = store->insert_job(j).value();
  JobRow back = store->job(id).value().value();
  EXPECT_EQ(back.name, "toy");
  EXPECT_EQ(back.state, JobState::pending);
  EXPECT_EQ(back.spec.command, j.spec.command);
  EXPECT_EQ(back.spec.env.at("A"), "b");
}

TEST_F(StoreTest, IllegalJobTransitionIsRefusedLoggedAndNotApplied) {
  JobRow j = new_job();
  j.id = store->insert_job(j).value();
  ASSERT_TRUE(store->set_job_state(j, JobState::placed, 2000).ok());
  ASSERT_TRUE(store->set_job_state(j, JobState::running, 2500).ok());
  auto r = store->set_job_state(j, JobState::pending, 3000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::conflict);
  EXPECT_EQ(j.state, JobState::running);
  EXPECT_EQ(store->job(j.id).value()->state, JobState::running);
  auto events = store->events_of(j.id).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "illegal-transition");
  EXPECT_EQ(events[0].message, "refused illegal job transition running -> pending");
}

TEST_F(StoreTest, EveryIllegalJobTransitionIsRefusedByTheStore) {
  for (JobState from : kAllJobStates) {
    for (JobState to : kAllJobStates) {
      if (from == to || can_transition(from, to)) continue;
      JobRow j = new_job();
      j.state = from;
      j.id = store->insert_job(j).value();
      EXPECT_FALSE(store->set_job_state(j, to, 5).ok()) << to_string(from) << "->" << to_string(to);
      EXPECT_EQ(store->job(j.id).value()->state, from);
    }
  }
}

TEST_F(StoreTest, AJobWrittenFromAStaleCopyIsCheckedAgainstTheStoredState) {
  JobRow j = new_job();
  j.id = store->insert_job(j).value();
  const JobRow stale = j;  // read while pending
  ASSERT_TRUE(store->set_job_state(j, JobState::placed, 2000).ok());
  ASSERT_TRUE(store->set_job_state(j, JobState::running, 2500).ok());
  JobRow again = stale;
  again.reason = "from the stale copy";
  auto r = store->update_job(again, 3000);  // pending over the stored running: refused
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::conflict);
  EXPECT_EQ(store->job(j.id).value()->state, JobState::running);
  EXPECT_EQ(store->job(j.id).value()->reason, "");
  JobRow moving = stale;  // pending -> succeeded is no transition; running -> succeeded is
  ASSERT_TRUE(store->set_job_state(moving, JobState::succeeded, 4000).ok());
  EXPECT_EQ(store->job(j.id).value()->state, JobState::succeeded);
  JobRow late = stale;  // pending -> cancelled is legal, succeeded -> cancelled is not
  EXPECT_FALSE(store->set_job_state(late, JobState::cancelled, 6000).ok());
  EXPECT_EQ(store->job(j.id).value()->state, JobState::succeeded);
}

TEST_F(StoreTest, ALaunchAddsTheAttemptAndMovesItsJobToItsCluster) {
  JobRow j = new_job();
  j.id = store->insert_job(j).value();
  AttemptRow a = first_attempt(j.id, "t-launch", "beta", 8);
  ASSERT_TRUE(store
                  ->transaction([&]() -> Result<void> {
                    auto id = store->launch_attempt(j, a, JobState::placed, 2000);
                    if (!id) return id.error();
                    EXPECT_GT(*id, 0);
                    return Ok{};
                  })
                  .ok());
  EXPECT_EQ(j.state, JobState::placed);
  EXPECT_EQ(store->job(j.id).value()->state, JobState::placed);
  EXPECT_EQ(store->attempt_by_token("t-launch").value()->cluster, "beta");
  ASSERT_EQ(store->job_changes().size(), 1u);
  EXPECT_EQ(store->job_changes()[0].state, JobState::placed);
  JobQuery on_beta;
  on_beta.cluster = "beta";
  EXPECT_EQ(store->job_page_keys(on_beta).value().size(), 1u);
  EXPECT_EQ(store->gpus_in_use().value().at("beta").held, 8);

  // A job that ended is launched no more, and no attempt is left behind.
  JobRow ended = new_job();
  ended.state = JobState::cancelled;
  ended.id = store->insert_job(ended).value();
  a.job_id = ended.id;
  a.token = "t-refused";
  EXPECT_FALSE(store->launch_attempt(ended, a, JobState::placed, 3000).ok());
  EXPECT_FALSE(store->attempt_by_token("t-refused").value().has_value());
}

TEST_F(StoreTest, OnlyTheEventsAWebhookMayBeToldOfBecomeNotices) {
  JobRow j = new_job();
  j.id = store->insert_job(j).value();
  ASSERT_TRUE(store->add_event(j.id, 1, 100, "placed", "attempt 1 placed on alpha").ok());
  ASSERT_TRUE(store->add_event(j.id, 1, 200, "succeeded", "exit 0").ok());
  ASSERT_TRUE(store->ensure_cluster("alpha", Admission::active, 0).ok());
  NodeEventRow probe{0, "alpha", "n1", 300, "probe", "ok"};
  ASSERT_TRUE(store->add_node_event(probe).ok());
  NodeEventRow quarantined{0, "alpha", "n1", 400, "quarantined", "2 failures within 7 days"};
  ASSERT_TRUE(store->add_node_event(quarantined).ok());
  auto notices = store->notices_after(0, 10).value();
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_EQ(notices[0].kind, "succeeded");
  EXPECT_EQ(notices[0].job_id, j.id);
  EXPECT_EQ(notices[0].message, "exit 0");
  EXPECT_EQ(notices[1].kind, "quarantined");
  EXPECT_EQ(notices[1].cluster, "alpha");
  EXPECT_EQ(notices[1].node, "n1");
  EXPECT_EQ(notices[1].at_ms, 400);
}

TEST_F(StoreTest, IllegalAttemptTransitionIsRefused) {
  AttemptRow a = add_attempt("t1");
  ASSERT_TRUE(store->set_attempt_state(a, AttemptState::exited, 10).ok());
  EXPECT_EQ(a.ended_ms, 10);
  EXPECT_FALSE(store->set_attempt_state(a, AttemptState::running, 11).ok());
  EXPECT_EQ(store->attempt_by_token("t1").value()->state, AttemptState::exited);
}

TEST_F(StoreTest, OnlyAnAttemptEndedBySiteDownCanBeReinstated) {
  AttemptRow a = add_attempt("t1");
  a.cause = ExitCause::site_down;
  ASSERT_TRUE(store->set_attempt_state(a, AttemptState::exited, 10).ok());
  a.site_done = true;
  a.exit_code = 1;
  ASSERT_TRUE(store->update_attempt(a).ok());
  EXPECT_FALSE(store->reinstate_attempt(a, AttemptState::exited).ok());

  ASSERT_TRUE(store->reinstate_attempt(a, AttemptState::running).ok());
  AttemptRow back = store->attempt_by_token("t1").value().value();
  EXPECT_EQ(back.state, AttemptState::running);
  EXPECT_EQ(back.cause, ExitCause::none);
  EXPECT_FALSE(back.ended_ms.has_value());
  EXPECT_FALSE(back.exit_code.has_value());
  EXPECT_FALSE(back.site_done);
  EXPECT_TRUE(back.launch_done);
  EXPECT_EQ(a.state, AttemptState::running) << "the caller's row follows";

  // Not from running, and not from an end with any other cause.
  auto r = store->reinstate_attempt(a, AttemptState::running);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::conflict);
  AttemptRow b = add_attempt("t2");
  b.cause = ExitCause::user_error;
  ASSERT_TRUE(store->set_attempt_state(b, AttemptState::exited, 10).ok());
  EXPECT_FALSE(store->reinstate_attempt(b, AttemptState::running).ok());
  EXPECT_EQ(store->attempt_by_token("t2").value()->state, AttemptState::exited);
  auto events = store->events_of(b.job_id).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].message, "refused illegal attempt transition exited(user_error) -> running");
}

TEST_F(StoreTest, NodeEventsAreListedNewestFirstPerClusterOrNode) {
  ASSERT_TRUE(store->ensure_cluster("alpha").ok());
  ASSERT_TRUE(store->ensure_cluster("beta").ok());
  AttemptRow a = add_attempt("t1");
  auto add = [&](const std::string& cluster, const std::string& node, Millis at,
                 const std::string& kind, bool with_job) {
    NodeEventRow e{0, cluster, node, at, kind, kind + " of " + node, std::nullopt, std::nullopt};
    if (with_job) {
      e.job_id = a.job_id;
      e.attempt_no = a.no;
    }
    return store->add_node_event(e).value();
  };
  add("alpha", "a1", 1, "node-unhealthy", false);
  add("alpha", "a2", 2, "node-failure", true);
  add("beta", "b1", 3, "node-unhealthy", false);
  std::int64_t last = add("alpha", "a1", 4, "node-healthy", false);

  auto all = store->node_events("alpha", std::nullopt, 10).value();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, last);
  EXPECT_EQ(all[0].kind, "node-healthy");
  EXPECT_EQ(all[1].node, "a2");
  EXPECT_EQ(all[1].job_id, a.job_id);
  EXPECT_EQ(all[1].attempt_no, 1);
  EXPECT_EQ(all[1].at_ms, 2);
  EXPECT_EQ(all[1].message, "node-failure of a2");
  EXPECT_FALSE(all[2].job_id.has_value());
  EXPECT_FALSE(all[2].attempt_no.has_value());

  auto a1 = store->node_events("alpha", std::string("a1"), 10).value();
  ASSERT_EQ(a1.size(), 2u);
  EXPECT_EQ(a1[0].kind, "node-healthy");
  EXPECT_EQ(a1[1].kind, "node-unhealthy");
  EXPECT_EQ(store->node_events("alpha", std::nullopt, 1).value().size(), 1u);
  EXPECT_EQ(store->node_events("beta", std::nullopt, 10).value().size(), 1u);
  EXPECT_TRUE(store->node_events("gamma", std::nullopt, 10).value().empty());
}

// A gang's node list is read (and expanded) only where it is used: a site worker's poll and
// transfer throttling read the live attempts without it, every other column as stored.
TEST_F(StoreTest, LiveAttemptsReadWithoutTheirNodesKeepEveryOtherColumn) {
  const JobId job = store->insert_job(new_job()).value();
  AttemptRow a = first_attempt(job, "orch-1-1", "alpha", 16);
  a.nodes = {"alpha-0001", "alpha-0002"};
  a.state = AttemptState::running;
  a.mfu_watch = nlohmann::json{{"baseline", 0.4}};
  a.id = store->insert_attempt(a).value();
  ASSERT_TRUE(store->update_attempt(a).ok());

  const AttemptRow whole = store->live_attempts("alpha").value().at(0);
  EXPECT_EQ(whole.nodes, a.nodes);
  for (const AttemptRow& lean : {store->live_attempts("alpha", false).value().at(0),
                                 store->live_attempts(std::nullopt, false).value().at(0),
                                 store->watched_attempts("alpha", false).value().at(0)}) {
    EXPECT_TRUE(lean.nodes.empty());
    EXPECT_EQ(lean.token, whole.token);
    EXPECT_EQ(lean.state, AttemptState::running);
    EXPECT_EQ(lean.gpus, 16);
    EXPECT_EQ(lean.mfu_watch, whole.mfu_watch);
  }
  EXPECT_EQ(store->watched_attempts("alpha").value().at(0).nodes, a.nodes);
}

TEST_F(StoreTest, FailedTransactionLeavesNoTrace) {
  auto r = store->transaction([&]() -> Result<void> {
    (void)store->insert_job(new_job());
    return make_error(ErrorKind::invalid, "changed my mind");
  });
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(store->jobs(std::nullopt, 10).value().empty());
}

TEST_F(StoreTest, OutboxKeepsOrderAndForgetsDoneActions) {
  OutboxRow launch{0, "alpha", ActionKind::launch, "t1", {{"x", 1}}, 1, std::nullopt};
  OutboxRow cancel{0, "alpha", ActionKind::cancel, "t1", {}, 2, std::nullopt};
  OutboxRow other{0, "beta", ActionKind::launch, "t2", {}, 3, std::nullopt};
  auto id1 = store->enqueue(launch).value();
  store->enqueue(cancel).value();
  store->enqueue(other).value();
  auto pending = store->pending_actions("alpha").value();
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].kind, ActionKind::launch);
  EXPECT_EQ(pending[0].payload["x"], 1);
  EXPECT_EQ(pending[1].kind, ActionKind::cancel);
  ASSERT_TRUE(store->mark_action_done(id1, 9).ok());
  EXPECT_EQ(store->pending_actions("alpha").value().size(), 1u);
  ASSERT_TRUE(store->mark_actions_done_for_token("t1", 10).ok());
  EXPECT_TRUE(store->pending_actions("alpha").value().empty());
  EXPECT_EQ(store->pending_actions("beta").value().size(), 1u);
}

TEST_F(StoreTest, CheckpointsAreUniqueAndTheLatestIsTheHighestStep) {
  AttemptRow a = add_attempt("t1");
  JobId job = a.job_id;
  EXPECT_TRUE(store->insert_checkpoint({0, job, a.id, 20, "/c/20", {}, 1}).value());
  EXPECT_TRUE(store->insert_checkpoint({0, job, a.id, 30, "/c/30", {}, 2}).value());
  EXPECT_FALSE(store->insert_checkpoint({0, job, a.id, 20, "/c/20", {}, 3}).value());
  EXPECT_EQ(store->latest_checkpoint(job).value()->step, 30);
}

TEST(StoreFile, StateSurvivesReopenAndIsReadableFromASecondConnection) {
  auto dir = std::filesystem::temp_directory_path() / "orch-store-file-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string path = (dir / "state.db").string();
  JobId id = 0;
  {
    auto writer = std::move(Store::open(path).value());
    auto reader = std::move(Store::open(path).value());
    ASSERT_TRUE(writer
                    ->transaction([&]() -> Result<void> {
                      id = writer->insert_job(new_job()).value();
                      return Ok{};
                    })
                    .ok());
    EXPECT_TRUE(reader->job(id).value().has_value()) << "a committed write is visible to readers";
  }
  auto again = std::move(Store::open(path).value());
  EXPECT_EQ(again->job(id).value()->name, "toy");
  std::filesystem::remove_all(dir);
}

TEST_F(StoreTest, ATransactionWhoseBodyThrowsRollsBackAndTheStoreGoesOn) {
  auto r = store->transaction([&]() -> Result<void> {
    EXPECT_TRUE(store->insert_job(new_job()).ok());
    throw std::runtime_error("boom");
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::internal);
  EXPECT_EQ(r.error().message, "internal error: boom");
  EXPECT_TRUE(store->jobs(std::nullopt, 10).value().empty());
  // Not left inside the failed transaction: the next one begins and commits.
  ASSERT_TRUE(store
                  ->transaction([&]() -> Result<void> {
                    return store->insert_job(new_job()).ok() ? Result<void>(Ok{})
                                                             : make_error(ErrorKind::io, "x");
                  })
                  .ok());
  EXPECT_EQ(store->jobs(std::nullopt, 10).value().size(), 1u);
}

TEST_F(StoreTest, InvalidUtf8IsStoredReplacedNeverThrown) {
  JobRow j = new_job();
  j.spec.command = "train \xff\xfe";
  auto id = store->insert_job(j);
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(store->job(*id).value()->spec.command, "train \xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_F(StoreTest, JobChangesTellWhatTheLastTransactionWrote) {
  JobId id = 0;
  ASSERT_TRUE(store
                  ->transaction([&]() -> Result<void> {
                    JobRow j = new_job();
                    j.spec = make_job().nodes(2).gpus(4);
                    id = store->insert_job(j).value();
                    j.id = id;
                    return store->set_job_state(j, JobState::placed, 2000);
                  })
                  .ok());
  const auto& changes = store->job_changes();
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].id, id);
  EXPECT_EQ(changes[0].state, JobState::pending);
  EXPECT_EQ(changes[0].nodes, 2);
  EXPECT_EQ(changes[0].gpus_per_node, 4);
  EXPECT_EQ(changes[1].state, JobState::placed);

  (void)store->transaction([&]() -> Result<void> {
    EXPECT_TRUE(store->insert_job(new_job()).ok());
    return make_error(ErrorKind::invalid, "no");
  });
  EXPECT_TRUE(store->job_changes().empty());  // rolled back: nothing was written
}

TEST_F(StoreTest, JobsPageNewestFirstBelowTheCursorByStateAndCluster) {
  std::vector<JobId> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(store->insert_job(new_job()).value());
  for (JobId id : {ids[1], ids[3]}) {
    AttemptRow a;
    a.job_id = id;
    a.no = 1;
    a.cluster = "beta";
    a.token = "t" + std::to_string(id);
    a.gpus = 1;
    ASSERT_TRUE(store->insert_attempt(a).ok());
  }
  auto page_ids = [&](const JobQuery& q) {
    std::vector<JobId> out;
    for (const auto& k : store->job_page_keys(q).value()) out.push_back(k.id);
    return out;
  };
  JobQuery q;
  q.limit = 2;
  EXPECT_EQ(page_ids(q), (std::vector<JobId>{ids[4], ids[3]}));
  q.before_id = ids[3];
  EXPECT_EQ(page_ids(q), (std::vector<JobId>{ids[2], ids[1]}));
  q.before_id = ids[1];
  EXPECT_EQ(page_ids(q), (std::vector<JobId>{ids[0]}));
  JobQuery beta;
  beta.cluster = "beta";
  EXPECT_EQ(page_ids(beta), (std::vector<JobId>{ids[3], ids[1]}));
  JobQuery placed;
  placed.state = JobState::placed;
  EXPECT_TRUE(page_ids(placed).empty());
}

TEST_F(StoreTest, JobsPageByOwnerAndTeam) {
  std::vector<JobId> ids;
  for (const auto& [owner, team] : std::vector<std::pair<std::string, std::string>>{
           {"alice", "vision"}, {"bob", "vision"}, {"alice", ""}}) {
    JobRow row = new_job();
    row.spec.owner = owner;
    row.spec.team = team;
    ids.push_back(store->insert_job(row).value());
  }
  auto page_ids = [&](const JobQuery& q) {
    std::vector<JobId> out;
    for (const auto& k : store->job_page_keys(q).value()) out.push_back(k.id);
    return out;
  };
  JobQuery alice;
  alice.owner = "alice";
  EXPECT_EQ(page_ids(alice), (std::vector<JobId>{ids[2], ids[0]}));
  JobQuery vision;
  vision.team = "vision";
  EXPECT_EQ(page_ids(vision), (std::vector<JobId>{ids[1], ids[0]}));
  vision.owner = "alice";
  EXPECT_EQ(page_ids(vision), (std::vector<JobId>{ids[0]}));
  const auto listed = store->job_listings({ids[1]}).value();
  EXPECT_EQ(listed.at(0).spec.owner, "bob");
  EXPECT_EQ(listed.at(0).spec.team, "vision");
}

TEST_F(StoreTest, AJobsRevisionMovesOnEveryWriteToItItsAttemptsOrItsCheckpoints) {
  const JobId id = store->insert_job(new_job()).value();
  const JobId other = store->insert_job(new_job()).value();
  auto revision = [&](JobId job) { return store->job_listings({job}).value().at(0).revision; };
  std::int64_t seen = revision(id);
  auto moved = [&] {
    const std::int64_t now = revision(id);
    const bool did = now > seen;
    seen = now;
    return did;
  };
  JobRow row = store->job(id).value().value();
  row.reason = "waiting for capacity";
  ASSERT_TRUE(store->update_job(row, 2000).ok());
  EXPECT_TRUE(moved()) << "the job's row";
  AttemptRow a;
  a.job_id = id;
  a.no = 1;
  a.cluster = "alpha";
  a.token = "t-rev";
  a.gpus = 1;
  a.id = store->insert_attempt(a).value();
  EXPECT_TRUE(moved()) << "an attempt added";
  a.last_step = 10;
  ASSERT_TRUE(store->update_attempt(a).ok());
  EXPECT_TRUE(moved()) << "an attempt written";
  ASSERT_TRUE(store->insert_checkpoint({0, id, a.id, 10, "/c/10", 1.0, 5}).ok());
  EXPECT_TRUE(moved()) << "a checkpoint";
  const std::int64_t others = revision(other);
  ASSERT_TRUE(store->insert_checkpoint({0, id, a.id, 20, "/c/20", 1.0, 6}).ok());
  EXPECT_EQ(revision(other), others) << "another job's writes leave it alone";
  EXPECT_EQ(store->job_listings({other, id}).value().size(), 2u);
}

TEST_F(StoreTest, WaitingJobsAreReadWithTheirSizesInIdOrder) {
  JobRow a = new_job();
  a.spec = make_job().nodes(3).gpus(2);
  JobId first = store->insert_job(a).value();
  JobRow b = new_job();
  b.id = store->insert_job(b).value();
  ASSERT_TRUE(store->set_job_state(b, JobState::placed, 2000).ok());
  auto waiting = store->waiting_jobs().value();
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(waiting[0].id, first);
  EXPECT_EQ(waiting[0].nodes, 3);
  EXPECT_EQ(waiting[0].gpus_per_node, 2);
}

TEST_F(StoreTest, APagesAttemptsAndLatestCheckpointsComeInOneStatementEach) {
  AttemptRow a = add_attempt("t-a");
  AttemptRow b = add_attempt("t-b");
  const JobId none = store->insert_job(new_job()).value();
  AttemptRow a2 = a;
  a2.no = 2;
  a2.token = "t-a2";
  a2.id = store->insert_attempt(a2).value();
  ASSERT_TRUE(store->insert_checkpoint({0, a.job_id, a.id, 10, "/c/10", 1.0, 5}).ok());
  ASSERT_TRUE(store->insert_checkpoint({0, a.job_id, a2.id, 30, "/c/30", 1.0, 6}).ok());
  ASSERT_TRUE(store->insert_checkpoint({0, a.job_id, a2.id, 20, "/c/20", 1.0, 7}).ok());

  auto attempts = store->attempts_of_jobs({a.job_id, b.job_id, none}).value();
  ASSERT_EQ(attempts.size(), 2u);
  ASSERT_EQ(attempts.at(a.job_id).size(), 2u);
  EXPECT_EQ(attempts.at(a.job_id)[1].token, "t-a2");
  EXPECT_EQ(attempts.at(b.job_id).at(0).token, "t-b");
  auto latest = store->latest_checkpoints({a.job_id, b.job_id, none}).value();
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest.at(a.job_id).step, 30);
  EXPECT_EQ(latest.at(a.job_id).path, "/c/30");
  EXPECT_TRUE(store->attempts_of_jobs({}).value().empty());
}

}  // namespace
}  // namespace orch
