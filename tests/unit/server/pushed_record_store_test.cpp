// The records agents push home, as the server keeps them (server/pushed_record_store.h, issue
// 44): each task's newest record and highest seq, a retried batch stored once, nothing for an
// attempt that ended, and all of it still there after the server restarts.
#include <sys/stat.h>

#include "tests/unit/server/push_test_util.h"

namespace orch::testing {
namespace {

TEST_F(PushStoreTest, EachTaskKeepsItsNewestRecordAndHighestSeq) {
  clock.set_ms(1'700'000'005'000);
  auto first = pushed(push_batch(0, {push_record(1, "start"), push_record(2, "heartbeat")}));
  EXPECT_EQ(first.stored, 2);
  EXPECT_EQ(first.last_seq, 2);
  pushed(push_batch(1, {push_record(1, "start")}));
  const auto tasks = store->tasks(kPushToken);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].rank, 0);
  EXPECT_EQ(tasks[0].node, "node-0");
  EXPECT_EQ(tasks[0].last_seq, 2);
  EXPECT_EQ(tasks[0].event, "heartbeat");
  EXPECT_EQ(tasks[0].at_ms, 1'700'000'000'002);
  EXPECT_EQ(tasks[0].received_ms, 1'700'000'005'000) << "the server's clock, not the agent's";
  EXPECT_EQ(tasks[1].rank, 1);
  EXPECT_EQ(tasks[1].event, "start");
  EXPECT_TRUE(store->tasks("orch-other").empty());
}

TEST_F(PushStoreTest, ARetriedBatchIsStoredOnceAndAnOverlappingOneOnlyForItsNewRecords) {
  const PushBatch batch = push_batch(0, {push_record(1, "start"), push_record(2, "heartbeat")});
  EXPECT_EQ(pushed(batch).stored, 2);
  const PushAnswer again = pushed(batch);
  EXPECT_EQ(again.stored, 0);
  EXPECT_EQ(again.last_seq, 2);
  const PushAnswer overlap =
      pushed(push_batch(0, {push_record(2, "heartbeat"), push_record(3, "progress")}));
  EXPECT_EQ(overlap.stored, 1);
  EXPECT_EQ(overlap.last_seq, 3);
  EXPECT_EQ(store->tasks(kPushToken).at(0).event, "progress");
}

TEST_F(PushStoreTest, TheNewestCheckpointStepOutlivesLaterHeartbeatsAndTheExitIsRead) {
  pushed(push_batch(0, {push_record(1, "checkpoint", {{"step", 100}, {"path", "/c/100"}}),
                        push_record(2, "checkpoint", {{"step", 120}, {"path", "/c/120"}}),
                        push_record(3, "heartbeat")}));
  EXPECT_EQ(store->tasks(kPushToken).at(0).checkpoint_step, 120);
  pushed(push_batch(0, {push_record(4, "exit", {{"exit_code", 3}})}));
  const PushedTask task = store->tasks(kPushToken).at(0);
  EXPECT_EQ(task.checkpoint_step, 120);
  EXPECT_EQ(task.event, "exit");
  EXPECT_EQ(task.exit_code, 3);
  EXPECT_FALSE(task.signal.has_value());
}

TEST_F(PushStoreTest, AFaultRepeatedOnTheNewestRecordIsRead) {
  const nlohmann::json fault = {{"cause", "gpu_xid"},
                                {"xid", 79},
                                {"gpu", 3},
                                {"node", "node-0"},
                                {"detail", "Xid 79 on GPU 3"}};
  pushed(push_batch(0, {push_record(1, "heartbeat", {{"fault", fault}})}));
  const PushedTask task = store->tasks(kPushToken).at(0);
  ASSERT_TRUE(task.fault.has_value());
  EXPECT_EQ(task.fault->xid, 79);
}

TEST_F(PushStoreTest, AnEndedOrUnknownAttemptIsGoneAndStoresNothing) {
  lives[kPushToken] = AttemptLife::ended;
  const PushAnswer ended = pushed(push_batch(0, {push_record(1, "heartbeat")}));
  EXPECT_TRUE(ended.gone);
  EXPECT_NE(ended.why.find("has ended"), std::string::npos) << ended.why;
  const PushAnswer unknown = pushed(push_batch(0, {push_record(1, "start")}, "orch-9-9-9"));
  EXPECT_TRUE(unknown.gone);
  EXPECT_NE(unknown.why.find("not known"), std::string::npos) << unknown.why;
  EXPECT_TRUE(store->tasks(kPushToken).empty());
  EXPECT_TRUE(store->tasks("orch-9-9-9").empty());
}

TEST_F(PushStoreTest, RecordsSurviveARestartAndARetryAfterItIsNoDuplicate) {
  const PushBatch batch = push_batch(0, {push_record(1, "start"), push_record(2, "heartbeat")});
  pushed(batch);
  pushed(push_batch(0, {push_record(3, "checkpoint", {{"step", 40}})}));
  open_store();  // the server restarts: the file is read again
  const auto tasks = store->tasks(kPushToken);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].last_seq, 3);
  EXPECT_EQ(tasks[0].checkpoint_step, 40);
  const PushAnswer retried = pushed(batch);  // an agent that never heard the answer
  EXPECT_EQ(retried.stored, 0);
  EXPECT_EQ(retried.last_seq, 3);
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/pushed.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "owner-only";
}

TEST_F(PushStoreTest, ServingSinceIsWhenTheServerBeganToAcceptPushes) {
  EXPECT_EQ(store->serving_since_ms(), clock.now_ms());
  clock.advance_ms(2'500);
  store->mark_serving();
  EXPECT_EQ(store->serving_since_ms(), clock.now_ms());
  EXPECT_EQ(store->now_ms(), clock.now_ms());
}

TEST_F(PushStoreTest, TheRowsOfEndedAttemptsGoOnceQuietAndLiveOnesStay) {
  lives["orch-8-1-1"] = AttemptLife::live;
  pushed(push_batch(0, {push_record(1, "exit", {{"exit_code", 0}})}));
  pushed(push_batch(0, {push_record(1, "heartbeat")}, "orch-8-1-1"));
  lives[kPushToken] = AttemptLife::ended;
  auto early = store->sweep();
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(*early, 0) << "the site may still read how it ended";
  clock.advance_ms(PushedRecordStore::kQuietBeforeSweepMs + 1);
  auto swept = store->sweep();
  ASSERT_TRUE(swept.ok()) << swept.error().message;
  EXPECT_EQ(*swept, 1);
  EXPECT_TRUE(store->tasks(kPushToken).empty());
  EXPECT_EQ(store->tasks("orch-8-1-1").size(), 1u) << "a live attempt keeps its rows";
}

TEST_F(PushStoreTest, LiveAttemptsThatStayQuietDoNotHideEndedOnesFromTheSweep) {
  for (const std::string token : {"orch-a", "orch-b", "orch-c", "orch-d"}) {
    lives[token] = AttemptLife::live;
    pushed(push_batch(0, {push_record(1, "heartbeat")}, token));
  }
  lives["orch-d"] = AttemptLife::ended;
  clock.advance_ms(PushedRecordStore::kQuietBeforeSweepMs + 1);
  EXPECT_EQ(*store->sweep(2), 0) << "a and b live";
  EXPECT_EQ(*store->sweep(2), 1) << "c lives, d ended";
  EXPECT_TRUE(store->tasks("orch-d").empty());
  EXPECT_EQ(store->tasks("orch-a").size(), 1u);
}

}  // namespace
}  // namespace orch::testing
