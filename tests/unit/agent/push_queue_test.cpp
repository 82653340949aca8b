// The push queue on a scripted clock (issue 44): seq numbering, batches and their bounds, the
// server's answers (acknowledged records dropped, 410 and 401 stop, 5xx backs off), and the
// bounded queue. No network, no sleeps.

#include "agents/push_queue.h"

#include <gmock/gmock.h>

#include <nlohmann/json.hpp>

namespace orch::agent {
namespace {

using nlohmann::json;

PushQueue queue(PushQueueOptions o = {}, double jitter = 0.0) {
  return PushQueue(o, [jitter] { return jitter; });
}

std::string heartbeat(std::int64_t at) {
  return R"({"event":"heartbeat","at_ms":)" + std::to_string(at) + "}";
}

PushAnswer ok(std::int64_t last_seq) {
  return {200, R"({"stored":1,"last_seq":)" + std::to_string(last_seq) + "}", ""};
}

std::vector<std::int64_t> seqs(const PushBatch& batch) {
  std::vector<std::int64_t> out;
  for (const json& r : json::parse(batch.records_json)) out.push_back(r["seq"]);
  return out;
}

TEST(PushQueue, EachRecordGetsTheNextSeqFirstAndKeepsItsMembers) {
  PushQueue q = queue();
  q.add(R"({"event":"start","pid":7,"at_ms":5})", 0);
  q.add(heartbeat(6), 0);
  auto batch = q.take_batch(0);
  ASSERT_TRUE(batch);
  const json records = json::parse(batch->records_json);
  EXPECT_EQ(records[0], json::parse(R"({"seq":1,"event":"start","pid":7,"at_ms":5})"));
  EXPECT_EQ(records[1], json::parse(R"({"seq":2,"event":"heartbeat","at_ms":6})"));
  EXPECT_EQ(batch->records_json.rfind(R"([{"seq":1,"event":"start")", 0), 0u);
  EXPECT_EQ(batch->first_seq, 1);
  EXPECT_EQ(batch->last_seq, 2);
}

TEST(PushQueue, HeartbeatsWaitForTheBatchIntervalButAStartGoesAtOnce) {
  PushQueue q = queue();
  q.add(heartbeat(1), 10'000);
  EXPECT_EQ(q.next_due_in(10'000), 1'000);
  EXPECT_FALSE(q.take_batch(10'999));
  q.add(R"({"event":"exit","exit_code":0})", 10'500);
  EXPECT_EQ(q.next_due_in(10'500), 0);
  auto batch = q.take_batch(10'500);
  ASSERT_TRUE(batch);
  EXPECT_THAT(seqs(*batch), ::testing::ElementsAre(1, 2));
}

TEST(PushQueue, NothingIsDueWhileARequestIsInFlight) {
  PushQueue q = queue();
  q.add(R"({"event":"start"})", 0);
  ASSERT_TRUE(q.take_batch(0));
  q.add(R"({"event":"fault"})", 10);
  EXPECT_EQ(q.next_due_in(10), -1);
  EXPECT_FALSE(q.take_batch(10));
  EXPECT_EQ(q.on_answer(ok(1), 20), "");
  // The fault came during the request: it goes at once, alone.
  auto batch = q.take_batch(20);
  ASSERT_TRUE(batch);
  EXPECT_THAT(seqs(*batch), ::testing::ElementsAre(2));
}

TEST(PushQueue, TheServersLastSeqDropsWhatItHoldsAndTheRestIsSentAgain) {
  PushQueue q = queue();
  for (int i = 0; i < 3; ++i) q.add(heartbeat(i), 0);
  ASSERT_TRUE(q.take_batch(1'000));
  q.on_answer(ok(2), 1'100);  // the server held 1 and 2 only
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.next_due_in(1'100), 1'000);
  auto again = q.take_batch(2'100);
  ASSERT_TRUE(again);
  EXPECT_THAT(seqs(*again), ::testing::ElementsAre(3));
  q.on_answer(ok(3), 2'200);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.next_due_in(2'200), -1);
}

TEST(PushQueue, ABatchHoldsAtMost256RecordsAndTheBacklogFollowsAtOnce) {
  PushQueue q = queue();
  for (int i = 0; i < 600; ++i) q.add(heartbeat(i), 0);
  auto first = q.take_batch(1'000);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->count, 256u);
  EXPECT_EQ(first->last_seq, 256);
  q.on_answer(ok(256), 1'050);
  EXPECT_EQ(q.next_due_in(1'050), 0);
  auto second = q.take_batch(1'050);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->first_seq, 257);
  EXPECT_EQ(second->count, 256u);
}

TEST(PushQueue, ABatchStaysUnderItsByteBound) {
  PushQueueOptions o;
  o.max_batch_bytes = 1'100;  // three records of 337 bytes, not four
  PushQueue q = queue(o);
  const std::string big = R"({"event":"progress","pad":")" + std::string(300, 'x') + "\"}";
  for (int i = 0; i < 10; ++i) q.add(big, 0);
  auto batch = q.take_batch(1'000);
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->count, 3u);
  EXPECT_LE(batch->records_json.size(), 1'100u);
}

TEST(PushQueue, FailuresBackOffFromOneSecondDoublingToThirtyWithJitter) {
  PushQueue q = queue({}, 0.0);  // jitter 0: the wait is half the step
  q.add(R"({"event":"start"})", 0);
  std::vector<std::int64_t> waits;
  std::int64_t now = 0;
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(q.take_batch(now));
    const std::string said = q.on_answer({503, "busy", ""}, now);
    EXPECT_EQ(said.empty(), i > 0) << "only the first failure of a run is said";
    waits.push_back(q.next_due_in(now));
    now += waits.back();
  }
  EXPECT_THAT(waits,
              ::testing::ElementsAre(500, 1'000, 2'000, 4'000, 8'000, 15'000, 15'000, 15'000));
  PushQueue full = queue({}, 0.99);  // the other end of the jitter: near the whole step
  full.add(R"({"event":"start"})", 0);
  ASSERT_TRUE(full.take_batch(0));
  full.on_answer({0, "", "cannot connect"}, 0);
  EXPECT_EQ(full.next_due_in(0), 995);
}

TEST(PushQueue, AnExitDuringBackoffWaitsForItButHurryingSendsAtOnce) {
  PushQueue q = queue();
  q.add(heartbeat(1), 0);
  ASSERT_TRUE(q.take_batch(1'000));
  q.on_answer({429, "", ""}, 1'000);
  ASSERT_TRUE(q.take_batch(1'500));
  q.on_answer({0, "", "no answer in time"}, 1'500);  // now waiting 1 s
  q.add(R"({"event":"exit","exit_code":0})", 1'600);
  EXPECT_EQ(q.next_due_in(1'600), 900);
  q.hurry(1'600);
  EXPECT_EQ(q.next_due_in(1'600), 0);
  ASSERT_TRUE(q.take_batch(1'600));
  EXPECT_EQ(q.on_answer({502, "", ""}, 1'600), "") << "this run of failures was said already";
  EXPECT_EQ(q.next_due_in(1'600), 500) << "after hurrying, backoff starts from 1 s again";
}

TEST(PushQueue, ASuccessAfterFailuresSaysSoAndResetsTheBackoff) {
  PushQueue q = queue();
  q.add(R"({"event":"start"})", 0);
  ASSERT_TRUE(q.take_batch(0));
  EXPECT_THAT(q.on_answer({0, "", "cannot connect to h:1: Connection refused"}, 0),
              ::testing::HasSubstr("Connection refused"));
  ASSERT_TRUE(q.take_batch(500));
  EXPECT_THAT(q.on_answer(ok(1), 500), ::testing::HasSubstr("after 1 failed tries"));
  EXPECT_EQ(q.failures(), 0);
}

TEST(PushQueue, GoneStopsPushingForGood) {
  PushQueue q = queue();
  q.add(R"({"event":"start"})", 0);
  ASSERT_TRUE(q.take_batch(0));
  EXPECT_THAT(q.on_answer({410, R"({"error":"attempt ended"})", ""}, 0),
              ::testing::HasSubstr("attempt is over (410)"));
  EXPECT_TRUE(q.stopped());
  q.add(R"({"event":"exit"})", 10);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.next_due_in(10), -1);
  EXPECT_FALSE(q.take_batch(100'000));
}

TEST(PushQueue, ARefusedCredentialStopsPushingForGood) {
  for (int status : {401, 403}) {
    PushQueue q = queue();
    q.add(R"({"event":"start"})", 0);
    ASSERT_TRUE(q.take_batch(0));
    EXPECT_THAT(q.on_answer({status, "", ""}, 0), ::testing::HasSubstr("refused the push"));
    EXPECT_TRUE(q.stopped()) << status;
  }
}

TEST(PushQueue, ABodyTooLargeHalvesTheBatchThenDropsARecordAlone) {
  PushQueue q = queue();
  for (int i = 0; i < 4; ++i) q.add(heartbeat(i), 0);
  ASSERT_EQ(q.take_batch(1'000)->count, 4u);
  EXPECT_EQ(q.on_answer({413, "", ""}, 1'000), "");
  ASSERT_EQ(q.take_batch(1'000)->count, 2u);
  q.on_answer({413, "", ""}, 1'000);
  ASSERT_EQ(q.take_batch(1'000)->count, 1u);
  EXPECT_THAT(q.on_answer({413, "", ""}, 1'000), ::testing::HasSubstr("refused 1 record"));
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.dropped(), 1u);
}

TEST(PushQueue, A200WithoutLastSeqIsAFailure) {
  PushQueue q = queue();
  q.add(R"({"event":"start"})", 0);
  ASSERT_TRUE(q.take_batch(0));
  EXPECT_THAT(q.on_answer({200, "<html>proxy</html>", ""}, 0), ::testing::HasSubstr("last_seq"));
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.failures(), 1);
}

TEST(PushQueue, AFullQueueDropsTheOldestHeartbeatsFirstAndNeverAStartOrExit) {
  PushQueueOptions o;
  o.max_queued = 5;
  PushQueue q = queue(o);
  q.add(R"({"event":"start"})", 0);                    // seq 1
  q.add(heartbeat(1), 0);                              // 2
  q.add(R"({"event":"progress","step":1})", 0);        // 3
  q.add(heartbeat(2), 0);                              // 4
  q.add(R"({"event":"checkpoint","step":1})", 0);      // 5
  q.add(R"({"event":"fault","cause":"gpu_xid"})", 0);  // 6: 2 goes
  q.add(heartbeat(3), 0);                              // 7: 4 goes
  q.add(R"({"event":"exit","exit_code":0})", 0);       // 8: 7 goes (the last heartbeat)
  q.add(R"({"event":"exit","exit_code":1})", 0);       // 9: 3 goes (no heartbeat left)
  EXPECT_EQ(q.dropped(), 4u);
  auto batch = q.take_batch(0);
  ASSERT_TRUE(batch);
  EXPECT_THAT(seqs(*batch), ::testing::ElementsAre(1, 5, 6, 8, 9));
  q.add(R"({"event":"exit","exit_code":2})", 0);  // nothing droppable: kept beyond the bound
  EXPECT_EQ(q.size(), 6u);
}

TEST(PushQueue, RecordEventAndLastSeqAreReadFromTheirText) {
  EXPECT_EQ(record_event(R"({"event":"io_stall","step":3})"), "io_stall");
  EXPECT_EQ(record_event(R"({"step":3})"), "");
  EXPECT_EQ(answer_last_seq(R"({"stored":2,"last_seq":17})"), 17);
  EXPECT_EQ(answer_last_seq(R"({"last_seq":-1})"), std::nullopt);
  EXPECT_EQ(answer_last_seq(R"({"last_seq":1.5})"), std::nullopt);
  EXPECT_EQ(answer_last_seq("last_seq: 3"), std::nullopt);
}

}  // namespace
}  // namespace orch::agent
