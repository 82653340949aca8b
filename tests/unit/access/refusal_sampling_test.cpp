// Refused requests without a valid token are counted, not each written (issue 37): one audit
// row per remote and status a minute, carrying how many it stands for; bounded memory with an
// "others" key; every refusal in GET /metrics; a valid token's changes are still each a row.
// On a fake clock: nothing here sleeps.
#include <gmock/gmock.h>

#include <unistd.h>

#include <string>

#include "scheduler/store/sqlite_db.h"
#include "tests/unit/access/access_fixture.h"
#include "web/access/refusal_sampler.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

const std::string kJob = "name: x\ncommand: c\n";

AuditRow refusal(const std::string& remote, int status) {
  AuditRow row;
  row.method = "POST";
  row.target = "/api/v1/jobs";
  row.remote = remote;
  row.status = status;
  row.result = "refused";
  return row;
}

TEST(RefusalSampler, TheFirstIsWrittenAtOnceAndTheRestOfTheMinuteAsOneCount) {
  FakeClock clock;
  RefusalSampler sampler(clock);
  auto first = sampler.note("10.0.0.1", refusal("10.0.0.1", 401));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->count, 1);
  for (int i = 0; i < 999; ++i) {
    clock.advance_ms(50);
    ASSERT_FALSE(sampler.note("10.0.0.1", refusal("10.0.0.1", 401))) << i;
  }
  EXPECT_TRUE(sampler.due().empty()) << "49.95 s: the minute is not over";
  // Another status and another address are keys of their own.
  EXPECT_TRUE(sampler.note("10.0.0.1", refusal("10.0.0.1", 415)));
  EXPECT_TRUE(sampler.note("10.0.0.2", refusal("10.0.0.2", 401)));
  clock.advance_ms(10'050);
  // A refusal after the minute writes the count, itself included.
  auto next = sampler.note("10.0.0.1", refusal("10.0.0.1", 401));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->count, 1000);
  EXPECT_EQ(next->remote, "10.0.0.1");
}

TEST(RefusalSampler, DueWritesEndedMinutesAndForgetsQuietKeys) {
  FakeClock clock;
  RefusalSampler sampler(clock);
  sampler.note("a", refusal("a", 401));
  for (int i = 0; i < 5; ++i) sampler.note("a", refusal("a", 401));
  sampler.note("b", refusal("b", 421));
  clock.advance_ms(60'000);
  const std::vector<AuditRow> rows = sampler.due();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].remote, "a");
  EXPECT_EQ(rows[0].count, 5);
  EXPECT_EQ(sampler.tracked(), 1u) << "b had nothing more to say and is forgotten";
  clock.advance_ms(60'000);
  EXPECT_TRUE(sampler.due().empty());
  EXPECT_EQ(sampler.tracked(), 0u);
  // Forgotten keys start afresh: written at once.
  EXPECT_TRUE(sampler.note("a", refusal("a", 401)));
}

TEST(RefusalSampler, BeyondItsCapNewAddressesShareOneKey) {
  FakeClock clock;
  RefusalSampler sampler(clock, 8);
  for (int i = 0; i < 8; ++i) {
    const std::string remote = "10.0.0." + std::to_string(i);
    EXPECT_TRUE(sampler.note(remote, refusal(remote, 401)));
  }
  auto other = sampler.note("10.0.1.1", refusal("10.0.1.1", 401));
  ASSERT_TRUE(other);
  EXPECT_EQ(other->remote, "others");
  for (int i = 2; i < 1000; ++i) {
    const std::string remote = "10.0.1." + std::to_string(i);
    EXPECT_FALSE(sampler.note(remote, refusal(remote, 401)));
  }
  EXPECT_EQ(sampler.tracked(), 9u);
  const std::vector<AuditRow> rest = sampler.flush();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].remote, "others");
  EXPECT_EQ(rest[0].count, 998);
}

TEST_F(AccessFixture, AnonymousRefusalsAreCountedNotEachWritten) {
  for (int i = 0; i < 3000; ++i) {
    HttpRequest r = request("POST", "/api/v1/jobs", "", kJob, "application/yaml");
    r.remote = "10.9.8.7";
    ASSERT_EQ(api->handle(r).status, 401);
  }
  for (int i = 0; i < 20; ++i) {
    HttpRequest r = request("POST", "/api/v1/jobs", "", kJob, "text/plain");
    ASSERT_EQ(api->handle(r).status, 415);
  }
  std::vector<AuditRow> rows = audit_rows();
  ASSERT_EQ(rows.size(), 2u) << "one row per remote and status";
  EXPECT_EQ(rows[1].status, 401);
  EXPECT_EQ(rows[1].remote, "10.9.8.7");
  EXPECT_EQ(rows[1].count, 1);
  EXPECT_EQ(rows[0].status, 415);
  // Every refusal counts in the metrics, whatever was written.
  const HttpResponse metrics = send("GET", "/metrics", Role::viewer);
  ASSERT_EQ(metrics.status, 200) << metrics.body;
  EXPECT_THAT(metrics.body, HasSubstr("# TYPE orchestrate_refused_requests_total counter"));
  EXPECT_THAT(metrics.body, HasSubstr("orchestrate_refused_requests_total{status=\"401\"} 3000"));
  EXPECT_THAT(metrics.body, HasSubstr("orchestrate_refused_requests_total{status=\"415\"} 20"));
  EXPECT_THAT(metrics.body, HasSubstr("orchestrate_refused_requests_total{status=\"429\"} 0"));
  // When the minute is over, the next request writes the counts.
  clock.advance_ms(60'000);
  EXPECT_EQ(send("GET", "/api/v1/jobs", Role::viewer).status, 200);
  rows = audit_rows();
  ASSERT_EQ(rows.size(), 4u);
  std::int64_t total = 0;
  for (const AuditRow& row : rows) total += row.count;
  EXPECT_EQ(total, 3020);
  // And the audit route shows the count.
  const HttpResponse audit = send("GET", "/api/v1/audit", Role::admin);
  EXPECT_THAT(audit.body, HasSubstr("\"count\":2999"));
}

TEST_F(AccessFixture, EveryChangeOfAValidTokenIsStillARow) {
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(send("POST", "/api/v1/jobs", Role::viewer, kJob, "application/yaml").status, 403);
    ASSERT_EQ(send("POST", "/api/v1/jobs", Role::user, kJob, "application/yaml").status, 201);
  }
  const std::vector<AuditRow> rows = audit_rows();
  ASSERT_EQ(rows.size(), 60u);
  for (const AuditRow& row : rows) EXPECT_EQ(row.count, 1);
}

TEST_F(AccessFixture, SampledCountsAreWrittenWhenTheGuardStops) {
  for (int i = 0; i < 10; ++i) api->handle(request("POST", "/api/v1/jobs", "", kJob));
  ASSERT_EQ(audit_rows().size(), 1u);
  api.reset();  // the server stops
  const std::vector<AuditRow> rows = audit_rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].count, 9);
}

TEST(AccessStore, AnOlderAuditLogGetsACountOfOnePerRow) {
  FakeClock clock;
  // Of this process alone: test binaries may run side by side.
  const std::string path =
      ::testing::TempDir() + "/access_count_migration_" + std::to_string(::getpid()) + ".db";
  std::remove(path.c_str());
  {
    auto db = Db::open(path);
    ASSERT_TRUE(db.ok());
    // The audit table as issue 16 made it, with one row.
    ASSERT_TRUE(db->exec("CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER "
                         "NOT NULL, user TEXT NOT NULL, role TEXT NOT NULL, method TEXT NOT NULL, "
                         "route TEXT NOT NULL, target TEXT NOT NULL, status INTEGER NOT NULL, "
                         "result TEXT NOT NULL, remote TEXT NOT NULL);"
                         "INSERT INTO audit (at_ms, user, role, method, route, target, status, "
                         "result, remote) VALUES (1, 'ada', 'admin', 'POST', '', '/x', 200, 'ok', "
                         "'127.0.0.1');")
                    .ok());
  }
  auto store = AccessStore::open(path, clock);
  ASSERT_TRUE(store.ok()) << store.error().message;
  AuditRow sampled = refusal("10.0.0.1", 401);
  sampled.count = 7;
  ASSERT_TRUE((*store)->record(sampled).ok());
  auto page = (*store)->audit(10, std::nullopt);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->rows.size(), 2u);
  EXPECT_EQ(page->rows[0].count, 7);
  EXPECT_EQ(page->rows[1].count, 1);
  EXPECT_EQ(page->rows[1].user, "ada");
  store->reset();
  EXPECT_TRUE(AccessStore::open(path, clock).ok()) << "a second open leaves it as it is";
  std::remove(path.c_str());
}

}  // namespace
}  // namespace orch::testing
