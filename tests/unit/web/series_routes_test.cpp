// GET /api/v1/jobs/{id}/series over the fake backend, without sockets: the points parameter
// (10 to 10000, default 2000) and every error status; its row in the route table and OpenAPI.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/web/routes_fixture.h"
#include "web/api_routes.h"
#include "web/openapi.h"

namespace orch {
namespace {

using nlohmann::json;

class SeriesRoutesTest : public testing::RoutesFixture {};

TEST_F(SeriesRoutesTest, AnswersTheBackendsSeriesWithTheDefaultOf2000Points) {
  auto r = call("GET", "/api/v1/jobs/1/series");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(backend.series_points_asked, 2000);
  const json body = parsed(r);
  EXPECT_EQ(body["job_id"], 1);
  ASSERT_EQ(body["attempts"].size(), 2u);
  EXPECT_EQ(body["attempts"][1]["points"][0]["first_step"], 3);
  EXPECT_EQ(body["checkpoints"][0]["step"], 2);
}

TEST_F(SeriesRoutesTest, PointsFrom10To10000) {
  for (int points : {10, 50, 10000}) {
    auto r = call("GET", "/api/v1/jobs/2/series?points=" + std::to_string(points));
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(backend.series_points_asked, points);
  }
}

TEST_F(SeriesRoutesTest, BadPointsAre400NamingTheRange) {
  for (const char* bad : {"9", "0", "10001", "-5", "abc", "", "20x", "99999999999999999999"}) {
    backend.series_points_asked = 0;
    expect_problem(call("GET", std::string("/api/v1/jobs/1/series?points=") + bad), 400,
                   "points must be an integer from 10 to 10000, got");
    EXPECT_EQ(backend.series_points_asked, 0) << bad << ": the backend is never asked";
  }
}

TEST_F(SeriesRoutesTest, UnknownJobIs404AndABadIdIs400) {
  expect_problem(call("GET", "/api/v1/jobs/9/series"), 404, "no job with id 9");
  expect_problem(call("GET", "/api/v1/jobs/abc/series"), 400, "job id must be a positive integer");
  EXPECT_EQ(call("POST", "/api/v1/jobs/1/series").status, 405);
}

TEST_F(SeriesRoutesTest, AViewersReadWithATypedAnswer) {
  const RouteTable table = api_routes(backend);
  const RouteRow* row = nullptr;
  for (const RouteRow& r : table) {
    if (r.path == "/api/v1/jobs/{id}/series") row = &r;
  }
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->role, Role::viewer);
  EXPECT_EQ(row->lane, Lane::read);
  const json doc = openapi_document(table);
  const json& answer = doc["paths"]["/api/v1/jobs/{id}/series"]["get"]["responses"]["200"]
                          ["content"]["application/json"]["schema"];
  EXPECT_EQ(answer["$ref"], "#/components/schemas/JobSeries") << answer.dump();
  const json& point = doc["components"]["schemas"]["SeriesPoint"];
  for (const char* key : {"step", "first_step", "last_step", "at_ms", "loss", "loss_min",
                          "loss_max", "tokens_per_s", "step_time_s", "mfu"}) {
    EXPECT_TRUE(point["properties"].contains(key)) << key;
  }
}

}  // namespace
}  // namespace orch
