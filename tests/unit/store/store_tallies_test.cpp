// The running totals /metrics reads (migration 16): triggers keep jobs by state, ended attempts
// by cause and bytes copied as rows change, and the migration counts what was there before.
#include <gmock/gmock.h>

#include "scheduler/store/migrations.h"
#include "scheduler/store/sqlite_db.h"
#include "scheduler/store/store.h"

namespace orch {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using Tally = std::vector<std::pair<std::string, std::int64_t>>;

class StoreTalliesTest : public ::testing::Test {
 protected:
  void SetUp() override { store = std::move(Store::open(":memory:").value()); }
  void sql(const std::string& text) { ASSERT_TRUE(store->db().exec(text).ok()) << text; }
  void job(int id, const std::string& state) {
    sql("INSERT INTO jobs(id, name, state, spec, created_ms, updated_ms) VALUES (" +
        std::to_string(id) + ", 'j', '" + state + "', '{}', 0, 0)");
  }
  void attempt(int id, int job_id, const std::string& cause) {
    sql("INSERT INTO attempts(id, job_id, no, cluster, token, state, cause, gpus, started_ms) "
        "VALUES (" +
        std::to_string(id) + ", " + std::to_string(job_id) + ", " + std::to_string(id) +
        ", 'alpha', 't" + std::to_string(id) + "', 'running', '" + cause + "', 1, 0)");
  }
  Tally tally(const std::string& kind) {
    Tally out;
    for (const auto& [key, n] : store->tallies(kind).value()) {
      if (n != 0) out.emplace_back(key, n);
    }
    return out;
  }
  std::unique_ptr<Store> store;
};

TEST_F(StoreTalliesTest, JobsByStateFollowEveryInsertAndChange) {
  job(1, "pending");
  job(2, "pending");
  EXPECT_THAT(tally("job_state"), ElementsAre(Pair("pending", 2)));
  sql("UPDATE jobs SET state = 'running' WHERE id = 1");
  sql("UPDATE jobs SET reason = 'x' WHERE id = 2");  // no change of state: no change
  EXPECT_THAT(tally("job_state"), ElementsAre(Pair("pending", 1), Pair("running", 1)));
  sql("UPDATE jobs SET state = 'succeeded' WHERE id = 1");
  sql("DELETE FROM jobs WHERE id = 2");
  EXPECT_THAT(tally("job_state"), ElementsAre(Pair("succeeded", 1)));
}

TEST_F(StoreTalliesTest, AttemptsCountOnceTheyEndAndAReinstatedOneIsTakenBack) {
  job(1, "running");
  attempt(1, 1, "none");
  EXPECT_THAT(tally("attempt_cause"), ElementsAre());
  sql("UPDATE attempts SET cause = 'site_down' WHERE id = 1");
  EXPECT_THAT(tally("attempt_cause"), ElementsAre(Pair("site_down", 1)));
  sql("UPDATE attempts SET cause = 'none' WHERE id = 1");  // its site came back running it
  EXPECT_THAT(tally("attempt_cause"), ElementsAre());
  sql("UPDATE attempts SET cause = 'succeeded' WHERE id = 1");
  attempt(2, 1, "node_lost");
  EXPECT_THAT(tally("attempt_cause"), ElementsAre(Pair("node_lost", 1), Pair("succeeded", 1)));
}

TEST_F(StoreTalliesTest, TheMigrationCountsTheRowsAlreadyThere) {
  auto db = Db::open(":memory:");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(migrate(*db, 15).ok());
  ASSERT_TRUE(db->exec("INSERT INTO jobs(name, state, spec, created_ms, updated_ms) VALUES "
                       "('a', 'failed', '{}', 0, 0), ('b', 'failed', '{}', 0, 0), "
                       "('c', 'running', '{}', 0, 0)")
                  .ok());
  ASSERT_TRUE(migrate(*db, -1).ok());
  auto st = db->prepare("SELECT key, n FROM tallies WHERE kind = 'job_state' ORDER BY key");
  ASSERT_TRUE(st.ok());
  Tally rows;
  while (st->step().value()) rows.emplace_back(st->col_text(0), st->col_int(1));
  EXPECT_THAT(rows, ElementsAre(Pair("failed", 2), Pair("running", 1)));
}

}  // namespace
}  // namespace orch
