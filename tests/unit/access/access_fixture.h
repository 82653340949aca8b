#pragma once
// The whole API behind its guard over the fake backend, an access store in memory on a fake
// clock, and a token of each role: what the access tests share.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "scheduler/common/clock.h"
#include "tests/unit/web/fake_backend.h"
#include "web/access/access_store.h"
#include "web/access/guarded_api.h"

namespace orch::testing {

// A request target that a route's pattern matches: each "{name}" segment made "1"
// ("/api/v1/jobs/{id}/cancel" -> "/api/v1/jobs/1/cancel").
inline std::string target_of(const std::string& pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') {
      out += pattern[i];
      continue;
    }
    out += "1";
    i = pattern.find('}', i);
  }
  return out;
}

class AccessFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = AccessStore::open(":memory:", clock);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store = std::move(*opened);
    api = std::make_unique<GuardedApi>(backend, *store,
                                       GuardOptions{answered_hosts("127.0.0.1", {})});
    // The user is alice: the fake backend's job 1 is hers, the others bob's.
    for (const auto& [name, role] : std::map<std::string, Role>{{"vic", Role::viewer},
                                                                {"alice", Role::user},
                                                                {"olga", Role::operator_},
                                                                {"ada", Role::admin}}) {
      auto token = store->create_token(name, role, "test");
      ASSERT_TRUE(token.ok()) << token.error().message;
      tokens[role] = *token;
    }
  }

  // A request as a same-machine client sends it: Host names the server.
  static HttpRequest request(const std::string& method, const std::string& target,
                             const std::string& token, const std::string& body = "",
                             const std::string& type = "application/json") {
    HttpRequest r = make_request(method, target, body, body.empty() ? "" : type);
    r.headers["host"] = "127.0.0.1:8080";
    r.remote = "127.0.0.1";
    if (!token.empty()) r.headers["authorization"] = "Bearer " + token;
    return r;
  }

  HttpResponse send(const std::string& method, const std::string& target, Role as,
                    const std::string& body = "", const std::string& type = "application/json") {
    return api->handle(request(method, target, tokens.at(as), body, type));
  }

  std::vector<AuditRow> audit_rows(int limit = 1000) {
    auto page = store->audit(limit, std::nullopt);
    EXPECT_TRUE(page.ok());
    return page.ok() ? page->rows : std::vector<AuditRow>{};
  }

  FakeClock clock;
  FakeBackend backend;
  std::unique_ptr<AccessStore> store;
  std::unique_ptr<GuardedApi> api;
  std::map<Role, std::string> tokens;
};

}  // namespace orch::testing
