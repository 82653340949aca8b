// A token bucket per caller for changes (issue 37): a burst goes through, the next change is a
// 429 with Retry-After until the bucket refills; reads are never limited; each user has a bucket
// of their own at their role's rate; idle buckets are dropped; a flood of 429s costs one audit
// row a minute per caller, carrying its count. On a fake clock: nothing here sleeps.
#include <gmock/gmock.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/unit/access/access_fixture.h"
#include "web/access/rate_limiter.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

const std::string kJob = "name: x\ncommand: c\n";

TEST(RateLimiter, ABurstGoesThroughThenTheCallerWaitsForTheRefill) {
  FakeClock clock;
  RateLimiter limiter(clock, RateLimits{{10, 40}, {20, 80}, {50, 200}});
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(limiter.take("alice", Role::user).allowed) << i;
  const RateLimiter::Verdict refused = limiter.take("alice", Role::user);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after_s, 1);  // 0.1 s to the next token, said in whole seconds
  EXPECT_EQ(refused.rate.per_s, 10);
  EXPECT_EQ(refused.rate.burst, 40);
  clock.advance_ms(100);
  EXPECT_TRUE(limiter.take("alice", Role::user).allowed);
  EXPECT_FALSE(limiter.take("alice", Role::user).allowed);
  // A second later, ten more; never more than the burst however long the wait.
  clock.advance_ms(1000);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(limiter.take("alice", Role::user).allowed) << i;
  EXPECT_FALSE(limiter.take("alice", Role::user).allowed);
  clock.advance_ms(3'600'000);
  int allowed = 0;
  while (limiter.take("alice", Role::user).allowed) ++allowed;
  EXPECT_EQ(allowed, 40);
}

TEST(RateLimiter, RetryAfterSaysWhenTheNextTokenComes) {
  FakeClock clock;
  RateLimiter limiter(clock, RateLimits{{0.25, 1}, {20, 80}, {50, 200}});
  EXPECT_TRUE(limiter.take("slow", Role::user).allowed);
  EXPECT_EQ(limiter.take("slow", Role::user).retry_after_s, 4);
  clock.advance_ms(2500);
  EXPECT_EQ(limiter.take("slow", Role::user).retry_after_s, 2);  // 1.5 s left, rounded up
  clock.advance_ms(1500);
  EXPECT_TRUE(limiter.take("slow", Role::user).allowed);
}

TEST(RateLimiter, EachUserHasABucketAtTheirRolesRate) {
  FakeClock clock;
  RateLimiter limiter(clock, RateLimits{{1, 2}, {1, 3}, {1, 5}});
  auto drain = [&](const std::string& user, Role role) {
    int n = 0;
    while (limiter.take(user, role).allowed) ++n;
    return n;
  };
  EXPECT_EQ(drain("alice", Role::user), 2);
  EXPECT_EQ(drain("bob", Role::user), 2) << "alice's flood is not bob's";
  EXPECT_EQ(drain("vic", Role::viewer), 2) << "a viewer is limited as a user";
  EXPECT_EQ(drain("olga", Role::operator_), 3);
  EXPECT_EQ(drain("ada", Role::admin), 5);
}

TEST(RateLimiter, IdleBucketsAreDropped) {
  FakeClock clock;
  RateLimiter limiter(clock, RateLimits{});
  for (int i = 0; i < 500; ++i) limiter.take("user" + std::to_string(i), Role::user);
  EXPECT_EQ(limiter.buckets(), 500u);
  // Long enough for every bucket to refill at any role's rate; each shard is swept when next
  // used, which these callers do.
  clock.advance_ms(120'000);
  for (int i = 0; i < 200; ++i) limiter.take("later" + std::to_string(i), Role::user);
  EXPECT_EQ(limiter.buckets(), 200u);
}

TEST(RateLimiter, ManyThreadsOfOneCallerGetExactlyTheBurst) {
  FakeClock clock;  // frozen: no refill while they race
  RateLimiter limiter(clock, RateLimits{{10, 40}, {20, 80}, {50, 200}});
  std::atomic<int> allowed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) allowed += limiter.take("alice", Role::user).allowed ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(allowed.load(), 40);
}

TEST_F(AccessFixture, AChangeOverTheRateIs429WithRetryAfterAndReadsAreNotLimited) {
  for (int i = 0; i < 40; ++i) {
    ASSERT_EQ(send("POST", "/api/v1/jobs", Role::user, kJob, "application/yaml").status, 201) << i;
  }
  const HttpResponse r = send("POST", "/api/v1/jobs", Role::user, kJob, "application/yaml");
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_EQ(r.header("Retry-After"), "1");
  EXPECT_THAT(r.body, HasSubstr("\"title\":\"Too Many Requests\""));
  EXPECT_THAT(r.body, HasSubstr("alice (role user) may make 10 changes a second, 40 at once"));
  EXPECT_THAT(r.body, HasSubstr("retry in 1 s"));
  EXPECT_THAT(r.body, HasSubstr("server.rate_limits"));
  EXPECT_EQ(r.header("Cache-Control"), "no-store");  // the guard's headers, as on every answer
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(send("GET", "/api/v1/jobs", Role::user).status, 200) << i;
  }
  // Another caller's changes go on.
  EXPECT_EQ(send("POST", "/api/v1/jobs", Role::operator_, kJob, "application/yaml").status, 201);
  clock.advance_ms(100);
  EXPECT_EQ(send("POST", "/api/v1/jobs", Role::user, kJob, "application/yaml").status, 201);
}

TEST_F(AccessFixture, AFloodOf429sIsOneAuditRowAMinuteWithItsCount) {
  for (int i = 0; i < 40; ++i) send("POST", "/api/v1/jobs", Role::user, kJob, "application/yaml");
  ASSERT_EQ(audit_rows().size(), 40u);
  for (int i = 0; i < 500; ++i) {
    ASSERT_EQ(send("POST", "/api/v1/jobs", Role::user, kJob, "application/yaml").status, 429);
  }
  std::vector<AuditRow> rows = audit_rows();
  ASSERT_EQ(rows.size(), 41u) << "one row for the first 429, the rest counted";
  EXPECT_EQ(rows[0].status, 429);
  EXPECT_EQ(rows[0].user, "alice");
  EXPECT_EQ(rows[0].result, "refused");
  EXPECT_EQ(rows[0].count, 1);
  // The minute ends: the next request of anyone writes what was counted.
  clock.advance_ms(60'000);
  EXPECT_EQ(send("GET", "/api/v1/jobs", Role::viewer).status, 200);
  rows = audit_rows();
  ASSERT_EQ(rows.size(), 42u);
  EXPECT_EQ(rows[0].status, 429);
  EXPECT_EQ(rows[0].user, "alice");
  EXPECT_EQ(rows[0].count, 499);
  EXPECT_EQ(rows[0].target, "/api/v1/jobs");
}

TEST_F(AccessFixture, ConfiguredRatesApplyPerRole) {
  GuardOptions options;
  options.hosts = answered_hosts("127.0.0.1", {});
  options.rate_limits.user = {1, 2};
  options.rate_limits.admin = {1, 3};
  GuardedApi limited(backend, *store, options);
  auto post_as = [&](Role role) {
    return limited.handle(
        request("POST", "/api/v1/jobs", tokens.at(role), kJob, "application/yaml"));
  };
  EXPECT_EQ(post_as(Role::user).status, 201);
  EXPECT_EQ(post_as(Role::user).status, 201);
  const HttpResponse third = post_as(Role::user);
  EXPECT_EQ(third.status, 429);
  EXPECT_THAT(third.body, HasSubstr("1 changes a second, 2 at once"));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(post_as(Role::admin).status, 201) << i;
  EXPECT_EQ(post_as(Role::admin).status, 429);
}

TEST_F(AccessFixture, AViewersFloodOfForbiddenChangesIsLimitedToo) {
  int forbidden = 0, limited = 0;
  for (int i = 0; i < 100; ++i) {
    const int status = send("POST", "/api/v1/jobs", Role::viewer, kJob, "application/yaml").status;
    forbidden += status == 403 ? 1 : 0;
    limited += status == 429 ? 1 : 0;
  }
  EXPECT_EQ(forbidden, 40);
  EXPECT_EQ(limited, 60);
  EXPECT_EQ(audit_rows().size(), 41u) << "each 403 of a known caller, one row for the 429s";
}

}  // namespace
}  // namespace orch::testing
