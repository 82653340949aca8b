// The server's one route table (web/route_table.h): every route is one row that says its method,
// path, lane, role, summary and schemas, and holds its handler; the router, the guard's roles
// and the OpenAPI document are built from it (openapi_test.cpp holds the document to it).
#include <gmock/gmock.h>

#include <map>
#include <set>
#include <string>

#include "tests/unit/access/access_fixture.h"
#include "web/openapi_schemas.h"

namespace orch::testing {
namespace {

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  std::string segment;
  for (char c : path + "/") {
    if (c != '/') {
      segment += c;
    } else if (!segment.empty()) {
      out.push_back(segment);
      segment.clear();
    }
  }
  return out;
}

// Whether one request could match both patterns: as many segments, each pair equal or one of
// them a "{param}".
bool overlap(const std::string& a, const std::string& b) {
  const auto x = segments(a), y = segments(b);
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] != y[i] && x[i].front() != '{' && y[i].front() != '{') return false;
  }
  return true;
}

class RouteTable : public AccessFixture {};

TEST_F(RouteTable, EveryRowHasARoleATagASummaryAndAHandler) {
  ASSERT_GT(api->routes().size(), 40u);
  for (const RouteRow& row : api->routes()) {
    EXPECT_THAT(row.method, ::testing::AnyOf("GET", "POST", "PUT", "DELETE")) << row.route();
    EXPECT_EQ(row.path.front(), '/') << row.route();
    EXPECT_FALSE(row.tag.empty()) << row.route() << " has no tag";
    EXPECT_FALSE(row.summary.empty()) << row.route() << " has no summary";
    EXPECT_TRUE(row.handler) << row.route() << " has no handler";
    // `attempt`: only the route an attempt's agents push to (issue 44).
    EXPECT_TRUE(
        row.role == Role::open || row.role == Role::viewer || row.role == Role::user ||
        row.role == Role::operator_ || row.role == Role::admin ||
        (row.role == Role::attempt && row.route() == "POST /api/v1/attempts/{token}/records"))
        << row.route();
  }
}

TEST_F(RouteTable, EveryJsonAnswerAndEveryBodyNamesASchemaTheDocumentHas) {
  const nlohmann::json schemas = openapi_schemas();
  for (const RouteRow& row : api->routes()) {
    if (row.answer == Answer::json) {
      EXPECT_TRUE(schemas.contains(row.answer_schema))
          << row.route() << " answers JSON of schema \"" << row.answer_schema
          << "\", which web/openapi_schemas.cpp does not have";
    } else {
      EXPECT_EQ(row.answer_schema, "") << row.route() << " answers no JSON";
    }
    if (row.body != Body::none) {
      EXPECT_TRUE(schemas.contains(row.body_schema)) << row.route() << " " << row.body_schema;
    }
    EXPECT_TRUE(row.ok >= 200 && row.ok < 300) << row.route();
  }
}

TEST_F(RouteTable, NoTwoRowsCouldAnswerTheSameRequest) {
  const auto& rows = api->routes();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = i + 1; j < rows.size(); ++j) {
      if (rows[i].method != rows[j].method) continue;
      EXPECT_FALSE(overlap(rows[i].path, rows[j].path))
          << rows[i].route() << " and " << rows[j].route() << " collide";
    }
  }
}

TEST_F(RouteTable, TheRouterHasEveryRowInOrderWithItsLaneAndRole) {
  std::vector<std::string> routes;
  for (const RouteRow& row : api->routes()) {
    routes.push_back(row.route());
    const HttpRequest r = request(row.method, target_of(row.path), "");
    EXPECT_EQ(api->router().route_of(r), row.route());
    EXPECT_EQ(api->router().lane_of(r), row.lane) << row.route();
    EXPECT_EQ(api->router().role_of(r), row.role) << row.route();
  }
  EXPECT_EQ(api->router().describe(), routes);
}

TEST_F(RouteTable, ReadsRunOnTheReadLaneChangesWaitForTheBrainAndSlowCallsOnTheProviderLane) {
  // A preflight runs on the site (SSH, the API server) before it tells the brain.
  const std::set<std::string> provider = {"POST /api/v1/clusters/{name}/outage",
                                          "POST /api/v1/clusters/{name}/check",
                                          "GET /api/v1/jobs/{id}/logs"};
  // The secrets' writes are quick store writes that never wait for the brain.
  // So are an agent's pushes (pushed.db, issue 44).
  const std::set<std::string> quick_writes = {
      "PUT /api/v1/secrets/{name}", "POST /api/v1/secrets/{name}/grant",
      "DELETE /api/v1/secrets/{name}", "POST /api/v1/attempts/{token}/records"};
  for (const RouteRow& row : api->routes()) {
    const std::string route = row.route();
    const Lane expected = route == "GET /healthz"     ? Lane::probe
                          : provider.count(route)     ? Lane::provider
                          : row.method == "GET"       ? Lane::read
                          : quick_writes.count(route) ? Lane::read
                                                      : Lane::command;
    EXPECT_EQ(row.lane, expected) << route << " runs on " << to_string(row.lane);
  }
}

TEST_F(RouteTable, OnlyTheProbeThePageAndTheDocumentAreOpen) {
  std::set<std::string> open;
  for (const RouteRow& row : api->routes()) {
    if (row.role == Role::open) open.insert(row.route());
  }
  EXPECT_EQ(open, (std::set<std::string>{"GET /healthz", "GET /", "GET /ui/{file}",
                                         "GET /api/v1/openapi.json"}));
}

TEST_F(RouteTable, TheGuardRefusesARouteWithoutARowRatherThanGuessItsRole) {
  Router router;
  router.add("GET", "/api/v1/stray",
             [](const HttpRequest&, const PathParams&) { return json_response(200, {}); });
  RefusedRequests refused;
  AccessGuard guard(router, *store, GuardOptions{answered_hosts("127.0.0.1", {})}, refused);
  const HttpResponse r = guard.handle(request("GET", "/api/v1/stray", tokens.at(Role::admin)));
  EXPECT_EQ(r.status, 500);
  EXPECT_THAT(r.body, ::testing::HasSubstr("GET /api/v1/stray has no role"));
}

}  // namespace
}  // namespace orch::testing
