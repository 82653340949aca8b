// The transfers list's reads (issue 42): a page of the active and failed transfers (or all),
// newest first, older than a cursor, read through an index so that a page costs its rows however
// long the history; each transfer's purpose and job; bytes copied per minute.
#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "scheduler/store/sqlite_db.h"
#include "scheduler/store/store.h"

namespace orch {
namespace {

constexpr Millis kStart = 1'700'000'000'020;  // 20 ms into a minute

class StoreTransfersTest : public ::testing::Test {
 protected:
  void SetUp() override { store = std::move(Store::open(":memory:").value()); }

  // A transfer from alpha to beta, moved to `state`; its id.
  std::int64_t add(TransferState state, TransferPurpose purpose = TransferPurpose::replication,
                   std::optional<JobId> job = std::nullopt) {
    TransferRow t;
    t.src_cluster = "alpha";
    t.dst_cluster = "beta";
    t.purpose = purpose;
    t.job_id = job;
    t.created_ms = kStart;
    t.id = store->insert_transfer(t).value();
    t.state = state;
    t.updated_ms = kStart;
    EXPECT_TRUE(store->update_transfer(t).ok());
    return t.id;
  }

  static std::vector<std::int64_t> ids(const std::vector<TransferRow>& rows) {
    std::vector<std::int64_t> out;
    for (const auto& r : rows) out.push_back(r.id);
    return out;
  }

  std::unique_ptr<Store> store;
};

TEST_F(StoreTransfersTest, TheDefaultPageHoldsTheActiveAndFailedOnesNewestFirst) {
  const auto queued = add(TransferState::queued);
  add(TransferState::done);
  const auto running = add(TransferState::running);
  add(TransferState::cancelled);
  const auto failed = add(TransferState::failed);
  const auto verifying = add(TransferState::verifying);

  EXPECT_THAT(ids(store->transfer_page(false, std::nullopt, 10).value()),
              ::testing::ElementsAre(verifying, failed, running, queued));
  EXPECT_EQ(store->transfer_page(true, std::nullopt, 10).value().size(), 6u)
      << "all: done and cancelled ones too";
}

TEST_F(StoreTransfersTest, APageEndsAtItsLimitAndTheNextBeginsBelowTheCursor) {
  std::vector<std::int64_t> made;
  for (int i = 0; i < 5; ++i) {
    made.push_back(add(TransferState::failed));
    add(TransferState::done);
  }
  auto first = store->transfer_page(false, std::nullopt, 2).value();
  EXPECT_THAT(ids(first), ::testing::ElementsAre(made[4], made[3]));
  auto second = store->transfer_page(false, first.back().id, 2).value();
  EXPECT_THAT(ids(second), ::testing::ElementsAre(made[2], made[1]));
  auto last = store->transfer_page(false, second.back().id, 2).value();
  EXPECT_THAT(ids(last), ::testing::ElementsAre(made[0]));
  EXPECT_THAT(ids(store->transfer_page(true, made[2], 3).value()),
              ::testing::ElementsAre(made[2] - 1, made[1], made[1] - 1))
      << "all: the done ones between them too";
}

// The plan SQLite makes for the default page: the partial index of shown transfers walked in id
// order, no sort of every matching row (which would cost the history, not the page).
TEST_F(StoreTransfersTest, TheDefaultPageWalksTheIndexOfShownTransfersWithoutSorting) {
  auto plan = query(
      store->db(),
      "EXPLAIN QUERY PLAN SELECT id FROM transfers INDEXED BY transfers_shown "
      "WHERE state IN ('queued', 'running', 'verifying', 'failed') AND id < ? "
      "ORDER BY id DESC LIMIT ?",
      [](const Stmt& st) { return st.col_text(3); }, std::int64_t{100}, 10);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  std::string text;
  for (const auto& line : *plan) text += line + "\n";
  EXPECT_THAT(text, ::testing::HasSubstr("transfers_shown"));
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("TEMP B-TREE"))) << text;
  // And the store's own read answers through it (INDEXED BY fails when it cannot be used).
  EXPECT_TRUE(store->transfer_page(false, 100, 10).ok());
}

TEST_F(StoreTransfersTest, ATransferKeepsItsPurposeAndJob) {
  const auto staging = add(TransferState::queued, TransferPurpose::staging, 7);
  const auto manual = add(TransferState::queued, TransferPurpose::manual);
  auto a = store->transfer(staging).value().value();
  EXPECT_EQ(a.purpose, TransferPurpose::staging);
  EXPECT_EQ(a.job_id, 7);
  auto b = store->transfer(manual).value().value();
  EXPECT_EQ(b.purpose, TransferPurpose::manual);
  EXPECT_FALSE(b.job_id.has_value());
}

TEST_F(StoreTransfersTest, BytesCopiedCountInTheMinuteTheirProgressWasReported) {
  const std::int64_t minute = kStart / 60'000;
  TransferRow t = store->transfer(add(TransferState::running)).value().value();
  t.bytes_done = 1000;
  t.updated_ms = kStart + 1000;
  ASSERT_TRUE(store->update_transfer(t).ok());
  t.bytes_done = 1500;
  t.updated_ms = kStart + 2000;
  ASSERT_TRUE(store->update_transfer(t).ok());
  t.bytes_done = 200;  // a retry starts over: nothing moved by going back
  t.updated_ms = kStart + 61'000;
  ASSERT_TRUE(store->update_transfer(t).ok());
  t.bytes_done = 700;
  t.updated_ms = kStart + 62'000;
  ASSERT_TRUE(store->update_transfer(t).ok());

  using Minute = std::pair<std::int64_t, std::int64_t>;
  EXPECT_THAT(store->transfer_minutes(minute).value(),
              ::testing::ElementsAre(Minute{minute, 1500}, Minute{minute + 1, 500}));
  EXPECT_THAT(store->transfer_minutes(minute + 1).value(),
              ::testing::ElementsAre(Minute{minute + 1, 500}));
}

TEST_F(StoreTransfersTest, MinutesOlderThanAWeekAreDropped) {
  const std::int64_t minute = kStart / 60'000;
  TransferRow t = store->transfer(add(TransferState::running)).value().value();
  t.bytes_done = 10;
  t.updated_ms = kStart;
  ASSERT_TRUE(store->update_transfer(t).ok());
  t.bytes_done = 20;
  t.updated_ms = kStart + 8LL * 24 * 3600 * 1000;
  ASSERT_TRUE(store->update_transfer(t).ok());
  auto kept = store->transfer_minutes(0).value();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].first, minute + 8 * 24 * 60);
}

}  // namespace
}  // namespace orch
