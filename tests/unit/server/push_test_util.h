#pragma once
// What the push tests share (issue 44): a PushedRecordStore over a fake clock whose attempts'
// lives the test sets, batches made from records, and a fresh directory.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "scheduler/common/clock.h"
#include "server/pushed_record_store.h"

namespace orch::testing {

inline const std::string kPushToken = "orch-7-1-1700000000000";

// {"seq": seq, "event": event, "at_ms": ...} plus extra members.
inline PushRecord push_record(std::int64_t seq, const std::string& event,
                              nlohmann::json extra = nlohmann::json::object()) {
  extra["seq"] = seq;
  extra["event"] = event;
  extra["at_ms"] = 1'700'000'000'000 + seq;
  return PushRecord{seq, event, 1'700'000'000'000 + seq, extra.dump()};
}

inline PushBatch push_batch(int rank, std::vector<PushRecord> records,
                            const std::string& token = kPushToken) {
  return PushBatch{token, rank, "node-" + std::to_string(rank), std::move(records)};
}

class PushStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/orch-push-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
    lives[kPushToken] = AttemptLife::live;
    open_store();
  }
  void TearDown() override {
    store.reset();
    std::filesystem::remove_all(dir);
  }
  void open_store() {
    store.reset();
    auto opened = PushedRecordStore::open(
        dir + "/pushed.db", clock, [this](const std::string& token) -> Result<AttemptLife> {
          ++life_checks;
          auto it = lives.find(token);
          return it == lives.end() ? AttemptLife::unknown : it->second;
        });
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store = std::move(*opened);
  }
  PushAnswer pushed(const PushBatch& batch) {
    auto answer = store->push(batch);
    EXPECT_TRUE(answer.ok()) << answer.error().message;
    return answer.ok() ? *answer : PushAnswer{};
  }

  FakeClock clock;
  std::string dir;
  std::map<std::string, AttemptLife> lives;
  int life_checks = 0;
  std::unique_ptr<PushedRecordStore> store;
};

}  // namespace orch::testing
