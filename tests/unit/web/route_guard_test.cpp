// No request can stop the server or get an answer that is not HTTP: every route, with every
// parameter and body a confused client or an attacker might send, answers a status with a JSON
// body (problem+json for errors), whether the backend answers, fails or throws.
#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "tests/unit/web/routes_fixture.h"
#include "web/router.h"

namespace orch::testing {
namespace {

// Values put in place of each {param} of a route, and into its query string.
const std::vector<std::string> kHostileValues = {
    "1",         "0",     "-1",         "99999999999999999999999", "%FF%FE%FD", "%C0%80",
    "%ED%A0%80", "a%00b", "%2F..%2F..", std::string(5000, 'x'),    "1e309",     "%22%7B%7D",
};

// Bodies: invalid UTF-8 in strings, broken JSON, wrong types, deep nesting.
std::vector<std::string> hostile_bodies() {
  return {"",
          "{",
          "\xff\xfe",
          "{\"name\": \"\xff\", \"cluster\": \"alpha\", \"path\": \"/a\", \"down\": true}",
          "{\"name\": \"ok\", \"command\": \"train \xc3\x28\", \"resources\": {\"nodes\": 1}}",
          "name: x\ncommand: \"\xed\xa0\x80\"\n",
          "[1, 2, 3]",
          "{\"down\": \"yes\", \"dataset\": 7, \"to\": [\"x\"], \"job_id\": -1}",
          std::string(20000, '[') + std::string(20000, ']'),
          "null",
          "{\"a\": 1e99999}"};
}

std::vector<std::string> targets_for(const std::string& pattern) {
  std::vector<std::string> out;
  for (const auto& value : kHostileValues) {
    std::string path;
    std::size_t at = 0;
    while (at < pattern.size()) {
      const auto open = pattern.find('{', at);
      if (open == std::string::npos) {
        path += pattern.substr(at);
        break;
      }
      path += pattern.substr(at, open - at) + value;
      at = pattern.find('}', open) + 1;
    }
    out.push_back(path);
    out.push_back(path + "?limit=" + value + "&state=" + value + "&cursor=" + value +
                  "&cluster=" + value + "&attempt=" + value + "&offset=" + value);
  }
  return out;
}

class RouteGuard : public RoutesFixture {
 protected:
  // Every answer is a status a client understands with a JSON body, problem+json when it is an
  // error, and the detail says something.
  void expect_sane(const HttpResponse& r, const std::string& what) {
    ASSERT_GE(r.status, 200) << what;
    ASSERT_LE(r.status, 599) << what;
    if (r.content_type.rfind("text/plain", 0) == 0) return;  // logs
    nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
    ASSERT_FALSE(body.is_discarded()) << what << " answered " << r.body.substr(0, 200);
    if (r.status >= 400) {
      EXPECT_EQ(r.content_type, "application/problem+json") << what;
      EXPECT_EQ(body["status"], r.status) << what;
      EXPECT_FALSE(body["detail"].get<std::string>().empty()) << what;
    }
  }

  void visit_every_route(int* server_errors) {
    const Router router = make_api_router(backend);
    for (const std::string& route : router.describe()) {
      const std::string method = route.substr(0, route.find(' '));
      const std::string pattern = route.substr(route.find(' ') + 1);
      // Every hostile target once (with a body in turn), and every body with every type on
      // the first target: each value and each body reach each route, in ~30 calls a route.
      const auto targets = targets_for(pattern);
      const auto bodies = method == "GET" ? std::vector<std::string>{""} : hostile_bodies();
      auto visit = [&](const std::string& target, const std::string& body, const char* type) {
        const HttpResponse r = call(method, target, body, type);
        expect_sane(r, route + " as " + method + " " + target.substr(0, 80));
        if (r.status >= 500) ++*server_errors;
      };
      for (std::size_t i = 0; i < targets.size(); ++i) {
        visit(targets[i], bodies[i % bodies.size()], "application/json");
      }
      for (const auto& body : bodies) {
        for (const char* type : {"application/json", "application/yaml", "text/html"}) {
          visit(targets.front(), body, type);
        }
      }
    }
  }
};

TEST_F(RouteGuard, EveryRouteAnswersHostileInputWithAClientError) {
  int server_errors = 0;
  visit_every_route(&server_errors);
  // The fake backend answers or refuses; nothing a client sends is the server's fault.
  EXPECT_EQ(server_errors, 0);
}

TEST_F(RouteGuard, EveryRouteTurnsABackendThatThrowsIntoAProblem) {
  backend.throw_everywhere = true;
  int server_errors = 0;
  visit_every_route(&server_errors);
  EXPECT_GT(server_errors, 0);  // the throws were reached, and each became a 500 problem
}

TEST_F(RouteGuard, TheRouterListsEveryRoute) {
  const auto routes = make_api_router(backend).describe();
  EXPECT_THAT(routes, ::testing::Contains("GET /api/v1/jobs/{id}"));
  EXPECT_THAT(routes, ::testing::Contains("POST /api/v1/jobs"));
  EXPECT_GE(routes.size(), 20u);
}

}  // namespace
}  // namespace orch::testing
