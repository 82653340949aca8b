// The running cost tally (issue 45, migration 36): an ended attempt adds what the pricer says
// it cost, in the transaction that writes it; later writes move the tally by their difference.
#include <gmock/gmock.h>

#include "scheduler/store/migrations.h"
#include "scheduler/store/sqlite_db.h"
#include "scheduler/store/store.h"
#include "tests/unit/store/store_rows.h"

namespace orch {
namespace {

using ::orch::testing::first_attempt_row;
using ::orch::testing::new_job_row;

// A pricer the test can read: an ended attempt's GPU-hours are its GPUs x 10, useful less the
// steps it lost, which are redone; money is twice the GPU-hours; the month is "2026-12".
std::vector<CostTallyRow> toy_price(const AttemptRow& a) {
  const double hours = 10.0 * a.gpus;
  std::vector<CostTallyRow> rows{
      {"2026-12", "", a.cluster, "useful", hours - a.steps_lost, 2 * (hours - a.steps_lost)}};
  if (a.steps_lost > 0) {
    rows.push_back({"2026-12", "", a.cluster, "redone", 1.0 * a.steps_lost, 2.0 * a.steps_lost});
  }
  return rows;
}

class StoreCostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store = std::move(Store::open(":memory:").value());
    store->set_attempt_pricer(toy_price);
  }
  AttemptRow add_attempt(const std::string& token, int gpus = 2) {
    JobRow job = new_job_row();
    job.spec.team = "vision";
    const JobId id = store->insert_job(job).value();
    AttemptRow a = first_attempt_row(id, token, "alpha", gpus);
    a.id = store->insert_attempt(a).value();
    return a;
  }
  // The tally as "month team cluster kind gpu_hours money" lines.
  std::vector<std::string> lines(const std::vector<CostTallyRow>& rows) {
    std::vector<std::string> out;
    for (const auto& r : rows) {
      char text[200];
      std::snprintf(text, sizeof text, "%s %s %s %s %.1f %.1f", r.month.c_str(), r.team.c_str(),
                    r.cluster.c_str(), r.kind.c_str(), r.gpu_hours, r.money);
      out.emplace_back(text);
    }
    return out;
  }
  std::unique_ptr<Store> store;
};

TEST_F(StoreCostsTest, ALiveAttemptAddsNothingAndAnEndedOneAddsItsMonthAndTheAllTimeTotals) {
  AttemptRow a = add_attempt("t1");
  a.state = AttemptState::running;
  ASSERT_TRUE(store->update_attempt(a).ok());
  EXPECT_TRUE(store->cost_totals().value().empty());
  ASSERT_TRUE(store->set_attempt_state(a, AttemptState::exited, 50).ok());
  EXPECT_THAT(lines(store->cost_tally("2026-01", "2026-12").value()),
              ::testing::ElementsAre("2026-12 vision alpha useful 20.0 40.0"));
  EXPECT_THAT(lines(store->cost_totals().value()),
              ::testing::ElementsAre("* vision alpha useful 20.0 40.0"));
  EXPECT_TRUE(store->cost_tally("2027-01", "2027-12").value().empty());
}

TEST_F(StoreCostsTest, StepsLostRecordedLaterMoveFromUsefulToRedoneAndRewritesAddNothing) {
  AttemptRow a = add_attempt("t1");
  ASSERT_TRUE(store->set_attempt_state(a, AttemptState::exited, 50).ok());
  a.steps_lost = 3;  // the next attempt resumed three steps before this one's last
  ASSERT_TRUE(store->update_attempt(a).ok());
  a.site_done = true;  // settles: the same cost
  ASSERT_TRUE(store->update_attempt(a).ok());
  EXPECT_THAT(
      lines(store->cost_totals().value()),
      ::testing::ElementsAre("* vision alpha redone 3.0 6.0", "* vision alpha useful 17.0 34.0"));
}

TEST_F(StoreCostsTest, AReinstatedAttemptIsTakenBackAndARolledBackEndAddsNothing) {
  AttemptRow a = add_attempt("t1");
  a.cause = ExitCause::site_down;
  ASSERT_TRUE(store->set_attempt_state(a, AttemptState::exited, 50).ok());
  ASSERT_TRUE(store->reinstate_attempt(a, AttemptState::running).ok());
  EXPECT_THAT(lines(store->cost_totals().value()),
              ::testing::ElementsAre("* vision alpha useful 0.0 0.0"));
  auto rolled = store->transaction([&]() -> Result<void> {
    AttemptRow b = a;
    if (auto r = store->set_attempt_state(b, AttemptState::exited, 60); !r) return r;
    return make_error(ErrorKind::internal, "the brain's event failed after");
  });
  EXPECT_FALSE(rolled.ok());
  EXPECT_THAT(lines(store->cost_totals().value()),
              ::testing::ElementsAre("* vision alpha useful 0.0 0.0"));
}

TEST_F(StoreCostsTest, WithoutAPricerNoTallyIsKept) {
  store->set_attempt_pricer(nullptr);
  AttemptRow a = add_attempt("t1");
  ASSERT_TRUE(store->set_attempt_state(a, AttemptState::exited, 50).ok());
  EXPECT_TRUE(store->cost_totals().value().empty());
}

TEST_F(StoreCostsTest, TheJobsWithAnAttemptEndedSinceAreReadFromTheEndIndex) {
  AttemptRow early = add_attempt("t1");
  AttemptRow late = add_attempt("t2");
  add_attempt("t3");  // live
  ASSERT_TRUE(store->set_attempt_state(early, AttemptState::exited, 50).ok());
  ASSERT_TRUE(store->set_attempt_state(late, AttemptState::exited, 500).ok());
  EXPECT_THAT(store->jobs_with_attempts_ended_since(100).value(),
              ::testing::ElementsAre(late.job_id));
}

// Prices live in the clusters file, not the database: attempts that ended before version 36
// are not priced by the migration (the tally starts empty; `report cost --by job` prices them).
TEST(StoreCostsMigration, VersionThirtySixStartsAnEmptyTallyBesideTheAttemptsAlreadyThere) {
  auto db = Db::open(":memory:");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(migrate(*db, 35).ok());
  ASSERT_TRUE(db->exec("INSERT INTO jobs(id, name, state, spec, created_ms, updated_ms) VALUES "
                       "(1, 'j', 'failed', '{}', 0, 0);"
                       "INSERT INTO attempts(id, job_id, no, cluster, token, state, gpus, "
                       "started_ms, ended_ms) VALUES (1, 1, 1, 'alpha', 't1', 'exited', 8, 0, 9)")
                  .ok());
  ASSERT_TRUE(migrate(*db, -1).ok());
  auto count = db->prepare("SELECT COUNT(*) FROM cost_tally");
  ASSERT_TRUE(count.ok());
  ASSERT_TRUE(count->step().value());
  EXPECT_EQ(count->col_int(0), 0);
}

}  // namespace
}  // namespace orch
