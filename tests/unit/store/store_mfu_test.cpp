// The MFU the store keeps (issue 41): each minute's bucket as work over time, rows written before
// schema 30 read as their old mean, and an attempt's MFU flag kept with it.
#include <gmock/gmock.h>

#include "scheduler/store/sqlite_db.h"
#include "scheduler/store/store.h"
#include "tests/harness/builders.h"
#include "tests/unit/store/store_rows.h"

namespace orch {
namespace {

class StoreMfuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store = std::move(Store::open(":memory:").value());
    const JobId job = store->insert_job(testing::new_job_row()).value();
    attempt = testing::first_attempt_row(job, "orch-1-1-0", "alpha", 2);
    attempt.id = store->insert_attempt(attempt).value();
  }

  std::vector<MfuBucketRow> buckets() { return store->mfu_series(attempt.id, "", 0).value(); }

  std::unique_ptr<Store> store;
  AttemptRow attempt;
};

// Two observations in one minute: 10 steps of 1 s at MFU 0.40 (work 4), then 5 of 4 s at 0.10
// (work 2): 6 over 30 s is 0.20, where the mean of the 15 steps' MFUs would be 0.30.
TEST_F(StoreMfuTest, AMinutesMfuIsItsWorkOverItsTime) {
  ASSERT_TRUE(store->add_mfu_samples(attempt.id, "alpha", "a1", 60'500, 4.0, 10.0, 10).ok());
  ASSERT_TRUE(store->add_mfu_samples(attempt.id, "alpha", "a1", 119'000, 2.0, 20.0, 5).ok());
  auto rows = buckets();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].bucket_ms, 60'000);
  EXPECT_EQ(rows[0].samples, 15);
  EXPECT_DOUBLE_EQ(rows[0].time_s, 30.0);
  EXPECT_DOUBLE_EQ(rows[0].mean(), 0.20);
}

// A bucket written before schema 30 holds a sum of per-step MFUs and no time: read as their
// mean; a new observation in the same minute starts it over as work over time.
TEST_F(StoreMfuTest, ABucketFromBeforeSchema30ReadsAsItsMeanAndIsNotAddedTo) {
  ASSERT_TRUE(execute(store->db(),
                      "INSERT INTO mfu_buckets(attempt_id, cluster, nodes, bucket_ms, mfu_sum, "
                      "samples) VALUES (?, 'alpha', 'a1', 0, 1.2, 3)",
                      attempt.id)
                  .ok());
  EXPECT_DOUBLE_EQ(buckets().at(0).mean(), 0.40);
  ASSERT_TRUE(store->add_mfu_samples(attempt.id, "alpha", "a1", 30'000, 1.0, 4.0, 2).ok());
  auto rows = buckets();
  EXPECT_EQ(rows.at(0).samples, 2);
  EXPECT_DOUBLE_EQ(rows.at(0).mean(), 0.25);
}

TEST_F(StoreMfuTest, TheFlagAndTheMfuTimeAreKeptWithTheAttempt) {
  attempt.tokens_total = 1000;
  attempt.step_time_total = 12.5;
  attempt.mfu_flag = "model size or peak FLOPs misconfigured: MFU 46633% is above 100%";
  ASSERT_TRUE(store->update_attempt(attempt).ok());
  EXPECT_EQ(store->attempt_by_token(attempt.token).value()->mfu_flag, attempt.mfu_flag);
  auto summaries = store->attempt_summaries_since(0).value();
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_DOUBLE_EQ(summaries[0].mfu_time_s, 12.5);
  EXPECT_FALSE(summaries[0].mfu.has_value());
}

}  // namespace
}  // namespace orch
