// The generated test of issue 16: every route of the router, with no token, a revoked token and
// a token of each role, answers 401, 403 or goes through as its row in the route table says; and
// every request of a valid token that changes something is one row of the audit log with the right
// user and result, while those refused without one are counted (issue 37).
#include <gmock/gmock.h>

#include <set>
#include <string>

#include "tests/unit/access/access_fixture.h"

namespace orch::testing {
namespace {

bool changes_state(const std::string& method) {
  return method != "GET" && method != "HEAD";
}

class AccessRoutes : public AccessFixture {
 protected:
  void SetUp() override {
    AccessFixture::SetUp();
    // Every route with every token on a clock that does not move: no rate limit may answer
    // first (rate_limit_test.cpp tests them).
    GuardOptions options;
    options.hosts = answered_hosts("127.0.0.1", {});
    options.rate_limits = {{1e6, 1'000'000}, {1e6, 1'000'000}, {1e6, 1'000'000}};
    api = std::make_unique<GuardedApi>(backend, *store, options);
  }

  // One call, and for a change, its row at the head of the audit log; a change refused for
  // want of a valid token is only counted in `anonymous` (its rows are sampled).
  HttpResponse visit(const std::string& route, const std::string& token, const std::string& user,
                     int& mutations) {
    const std::string method = route.substr(0, route.find(' '));
    const std::string target = target_of(route.substr(route.find(' ') + 1));
    HttpResponse r = api->handle(request(method, target, token, changes_state(method) ? "{}" : ""));
    if (changes_state(method) && r.status == 401) {
      ++anonymous;
    } else if (changes_state(method)) {
      ++mutations;
      const auto rows = audit_rows(1);
      EXPECT_EQ(rows.size(), 1u) << route;
      if (rows.size() == 1) {
        const AuditRow& row = rows.front();
        EXPECT_EQ(row.user, user) << route;
        EXPECT_EQ(row.route, route);
        EXPECT_EQ(row.target, target);
        EXPECT_EQ(row.status, r.status) << route;
        const std::string expected = r.status == 401 || r.status == 403 ? "refused"
                                     : r.status < 400                   ? "ok"
                                                                        : "failed";
        EXPECT_EQ(row.result, expected) << route << " answered " << r.status;
        EXPECT_EQ(row.remote, "127.0.0.1");
      }
    }
    return r;
  }
  int anonymous = 0;
};

TEST_F(AccessRoutes, EachRouteAnswersEveryCallerAsTheRoleTableSays) {
  auto revoked = store->create_token("rex", Role::admin, "test");
  ASSERT_TRUE(revoked.ok());
  ASSERT_TRUE(store->revoke_token("rex").ok());
  const std::map<Role, std::string> users = {{Role::viewer, "vic"},
                                             {Role::user, "alice"},
                                             {Role::operator_, "olga"},
                                             {Role::admin, "ada"}};
  std::map<std::string, Role> role_of;
  for (const RouteRow& row : api->routes()) role_of[row.route()] = row.role;
  int mutations = 0;
  int routes = 0;
  for (const std::string& route : api->router().describe()) {
    ++routes;
    const std::optional<Role> needed =
        role_of.count(route) ? std::optional<Role>(role_of.at(route)) : std::nullopt;
    ASSERT_TRUE(needed) << route;
    if (*needed == Role::open) {
      const HttpResponse r = visit(route, "", "", mutations);
      EXPECT_NE(r.status, 401) << route;
      EXPECT_NE(r.status, 403) << route;
      continue;
    }
    EXPECT_EQ(visit(route, "", "", mutations).status, 401) << route << " without a token";
    EXPECT_EQ(visit(route, *revoked, "", mutations).status, 401)
        << route << " with a revoked token";
    for (const auto& [role, user] : users) {
      const HttpResponse r = visit(route, tokens.at(role), user, mutations);
      if (role_allows(role, *needed)) {
        EXPECT_NE(r.status, 401) << route << " as " << to_string(role);
        EXPECT_NE(r.status, 403) << route << " as " << to_string(role) << ": " << r.body;
      } else {
        EXPECT_EQ(r.status, 403) << route << " as " << to_string(role) << ": " << r.body;
      }
    }
  }
  EXPECT_GE(routes, 40);
  // Each change of a valid token was recorded once: no more rows than changes asked for, none
  // fewer; the refusals without one are counts, written once their minute is over.
  clock.advance_ms(60'000);
  EXPECT_EQ(send("GET", "/api/v1/jobs", Role::viewer).status, 200);
  std::size_t known = 0;
  std::int64_t counted = 0;
  for (const AuditRow& row : audit_rows()) {
    if (row.user.empty() && row.status == 401) {
      counted += row.count;
    } else {
      ++known;
    }
  }
  EXPECT_EQ(known, static_cast<std::size_t>(mutations));
  EXPECT_GT(mutations + anonymous, 100);
  EXPECT_EQ(counted, anonymous);
}

TEST_F(AccessRoutes, AUserCancelsTheirOwnJobsAndAnOperatorAnyones) {
  EXPECT_EQ(send("POST", "/api/v1/jobs/1/cancel", Role::user).status, 202);      // alice's
  const HttpResponse other = send("POST", "/api/v1/jobs/2/cancel", Role::user);  // bob's
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_THAT(other.body, ::testing::HasSubstr("only their own jobs"));
  EXPECT_EQ(audit_rows(1).at(0).result, "refused");
  // An operator gets past whose job it is (job 2 has ended: the fake says so).
  EXPECT_EQ(send("POST", "/api/v1/jobs/2/cancel", Role::operator_).status, 409);
}

TEST_F(AccessRoutes, ASubmittedJobIsOwnedByTheTokensUser) {
  const HttpResponse r =
      send("POST", "/api/v1/jobs", Role::user, "name: x\ncommand: c\n", "application/yaml");
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(backend.last_owner, "alice");
}

}  // namespace
}  // namespace orch::testing
