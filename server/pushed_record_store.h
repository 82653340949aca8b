#pragma once
// The records agents push home (issue 44): POST /api/v1/attempts/{token}/records stores them
// here (web/push_api.h), and the sites read each task's newest through PushedRecordSource
// (scheduler/pushed_records.h). A SQLite file of its own, <state>/pushed.db (owner-only), beside
// the state database like access.db: pushes come from every task of every running attempt each
// second, so they never wait for the brain nor make it wait. One row per (launch token, rank): the
// highest seq held (a retried batch is stored once), the node, when the last batch came (the
// server's clock), the newest record and the newest checkpoint's step; a push costs what its
// batch holds, never the task's history. Rows of attempts that ended (or that this server never
// knew) are deleted once they have been quiet for kQuietBeforeSweepMs. Safe from any thread.

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/common/result.h"
#include "scheduler/pushed_records.h"
#include "web/push_api.h"

namespace orch {

class Db;

// Whether an attempt may push: known to the state and not ended.
enum class AttemptLife { unknown, live, ended };
using AttemptLifeOf = std::function<Result<AttemptLife>(const std::string& token)>;

class PushedRecordStore final : public PushApi, public PushedRecordSource {
 public:
  // Opens (creating it owner-only) the file at path (":memory:" for tests); life_of says of a
  // launch token whether its attempt lives (the server reads the state database). Serving from
  // now on (mark_serving moves it).
  static Result<std::unique_ptr<PushedRecordStore>> open(const std::string& path,
                                                         const Clock& clock, AttemptLifeOf life_of);
  ~PushedRecordStore() override;
  PushedRecordStore(const PushedRecordStore&) = delete;
  PushedRecordStore& operator=(const PushedRecordStore&) = delete;

  // PushApi: the records above the task's last_seq, stored in one transaction; gone (410) when
  // the attempt has ended or is unknown.
  Result<PushAnswer> push(const PushBatch& batch) override;

  // PushedRecordSource.
  std::vector<PushedTask> tasks(const std::string& token) override;
  std::int64_t serving_since_ms() const override;
  std::int64_t now_ms() const override { return clock_.now_ms(); }

  // When the server began to accept pushes (its HTTP server started).
  void mark_serving();
  // Deletes the rows of attempts that are no longer live and have been quiet for
  // kQuietBeforeSweepMs; push() runs it once a minute. Each call looks at `at_most` quiet
  // attempts after those the last one looked at (by token, round and round), so live attempts
  // that stay quiet never hide ended ones. The count deleted.
  Result<int> sweep(int at_most = kSweepTokens);

  static constexpr Millis kQuietBeforeSweepMs = 10 * 60 * 1000;
  static constexpr int kSweepTokens = 100;

 private:
  PushedRecordStore(std::unique_ptr<Db> db, const Clock& clock, AttemptLifeOf life_of);
  Result<PushAnswer> store(const PushBatch& batch);
  mutable std::mutex mu_;
  std::unique_ptr<Db> db_;
  const Clock& clock_;
  AttemptLifeOf life_of_;
  Millis serving_since_ms_ = 0;  // under mu_
  Millis next_sweep_ms_ = 0;     // under mu_
  std::string swept_to_;         // under mu_: the last token the last sweep looked at
};

}  // namespace orch
