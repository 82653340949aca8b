// What an attempt's credential opens (issue 44's acceptance: "The scoped credential cannot call
// any other route (403 in a test for every route)"): every route of the server's table called
// with it is 403 but POST /api/v1/attempts/{token}/records for its own token; that route refuses
// another attempt's credential and every API token, and an agent's accepted push is no audit row.
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/access/access_fixture.h"
#include "web/access/attempt_credential.h"

namespace orch::testing {
namespace {

const std::string kOwnRoute = "POST /api/v1/attempts/{token}/records";
const std::string kToken = "1";  // what target_of puts in {token}

// Takes every push: stored = the batch's records.
class CountingPushApi final : public PushApi {
 public:
  Result<PushAnswer> push(const PushBatch& batch) override {
    ++pushes;
    PushAnswer a;
    a.stored = static_cast<std::int64_t>(batch.records.size());
    a.last_seq = batch.records.empty() ? 0 : batch.records.back().seq;
    return a;
  }
  int pushes = 0;
};

const std::string kBody =
    R"({"rank": 0, "node": "n1", "records": [{"seq": 1, "event": "start", "at_ms": 5}]})";

class AttemptAccess : public AccessFixture {
 protected:
  void SetUp() override {
    AccessFixture::SetUp();
    api = std::make_unique<GuardedApi>(
        backend, *store, GuardOptions{answered_hosts("127.0.0.1", {})}, nullptr, &push);
    credential = store->attempt_credential(kToken);
  }
  HttpResponse call(const std::string& method, const std::string& target,
                    const std::string& bearer) {
    const bool changes = method != "GET" && method != "HEAD";
    return api->handle(request(method, target, bearer, changes ? kBody : ""));
  }
  CountingPushApi push;
  std::string credential;
};

TEST_F(AttemptAccess, TheCredentialIsRefusedOnEveryRouteButItsOwn) {
  int routes = 0;
  for (const RouteRow& row : GuardedApi::route_table(backend, *store, RefusedRequests{})) {
    ++routes;
    const HttpResponse r = call(row.method, target_of(row.path), credential);
    if (row.route() == kOwnRoute) {
      EXPECT_EQ(r.status, 200) << row.route() << ": " << r.body;
    } else {
      EXPECT_EQ(r.status, 403) << row.route() << " with an attempt's credential: " << r.body;
    }
  }
  EXPECT_GE(routes, 40);
  EXPECT_EQ(call("GET", "/api/v1/nowhere", credential).status, 403) << "nor a route there is not";
  EXPECT_EQ(push.pushes, 1);
}

TEST_F(AttemptAccess, AnotherAttemptsCredentialOrAMalformedOneIsRefused) {
  const std::string other = store->attempt_credential("2");
  EXPECT_EQ(call("POST", "/api/v1/attempts/1/records", other).status, 403);
  EXPECT_EQ(call("POST", "/api/v1/attempts/2/records", other).status, 200);
  EXPECT_EQ(call("POST", "/api/v1/attempts/1/records", "orch_att_abc").status, 401);
  // Derived under another server's key.
  EXPECT_EQ(
      call("POST", "/api/v1/attempts/1/records", attempt_credential("another key", kToken)).status,
      403);
  EXPECT_EQ(push.pushes, 1);
}

TEST_F(AttemptAccess, NoApiTokenMayPushWhateverItsRole) {
  for (const auto& [role, token] : tokens) {
    const HttpResponse r = call("POST", "/api/v1/attempts/1/records", token);
    EXPECT_EQ(r.status, 403) << to_string(role) << ": " << r.body;
  }
  EXPECT_EQ(call("POST", "/api/v1/attempts/1/records", "").status, 401);
  EXPECT_EQ(push.pushes, 0);
}

TEST_F(AttemptAccess, AnAcceptedPushIsNoAuditRowButARefusalIsCounted) {
  const auto before = audit_rows().size();
  ASSERT_EQ(call("POST", "/api/v1/attempts/1/records", credential).status, 200);
  EXPECT_EQ(audit_rows().size(), before) << "a push a task each second is not a row each";
  ASSERT_EQ(call("POST", "/api/v1/jobs/1/cancel", credential).status, 403);
  clock.advance_ms(60'000);
  call("GET", "/api/v1/jobs", tokens.at(Role::viewer));  // writes the minute's sampled refusals
  std::int64_t refused = 0;
  for (const AuditRow& row : audit_rows()) {
    if (row.status == 403 && row.target == "/api/v1/jobs/1/cancel") refused += row.count;
  }
  EXPECT_EQ(refused, 1);
}

}  // namespace
}  // namespace orch::testing
