// The routing table, without sockets: every route, every error mapping, bad ids and bodies.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/web/routes_fixture.h"
#include "web/api_routes.h"

namespace orch {
namespace {

using nlohmann::json;

// Requests here name their content type themselves (none unless given).
class ApiRoutesTest : public testing::RoutesFixture {
 protected:
  HttpResponse call(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& type = "") {
    return RoutesFixture::call(method, target, body, type);
  }
};

TEST_F(ApiRoutesTest, Healthz) {
  auto r = call("GET", "/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(parsed(r)["status"], "ok");
}

TEST(ApiLanes, WhatWaitsOnSomethingSlowGetsALaneOfItsOwn) {
  testing::FakeBackend backend;
  const Router router = make_api_router(backend);
  auto lane = [&](const std::string& method, const std::string& path) {
    HttpRequest r;
    r.method = method;
    r.path = path;
    return router.lane_of(r);
  };
  EXPECT_EQ(lane("GET", "/healthz"), Lane::probe);
  EXPECT_EQ(lane("GET", "/api/v1/jobs"), Lane::read);
  EXPECT_EQ(lane("GET", "/api/v1/jobs/7"), Lane::read);
  EXPECT_EQ(lane("POST", "/api/v1/jobs"), Lane::command);
  EXPECT_EQ(lane("POST", "/api/v1/jobs/7/cancel"), Lane::command);
  EXPECT_EQ(lane("GET", "/api/v1/jobs/7/logs"), Lane::provider);
  EXPECT_EQ(lane("POST", "/api/v1/clusters/alpha/outage"), Lane::provider);
  EXPECT_EQ(lane("DELETE", "/nowhere"), Lane::read) << "a 404 is cheap";
  const auto lanes = api_lanes();
  ASSERT_EQ(lanes.size(), kLaneCount);
  for (std::size_t i = 0; i < kLaneCount; ++i) {
    EXPECT_EQ(lanes[i].name, to_string(static_cast<Lane>(i)));
    EXPECT_GE(lanes[i].threads, 1);
  }
}

TEST_F(ApiRoutesTest, ListClusters) {
  auto r = call("GET", "/api/v1/clusters");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(parsed(r)["clusters"].size(), 2u);
}

TEST_F(ApiRoutesTest, TrailingSlashIsTheSameRoute) {
  EXPECT_EQ(call("GET", "/api/v1/clusters/").status, 200);
}

TEST_F(ApiRoutesTest, Outage) {
  auto r = call("POST", "/api/v1/clusters/alpha/outage", R"({"down": true})");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(backend.last_cluster, "alpha");
  EXPECT_TRUE(backend.last_down);
  EXPECT_EQ(call("POST", "/api/v1/clusters/alpha/outage", R"({"down": false})").status, 200);
  EXPECT_FALSE(backend.last_down);
}

TEST_F(ApiRoutesTest, OutageDecodesTheClusterName) {
  EXPECT_EQ(call("POST", "/api/v1/clusters/beta%20gamma/outage", R"({"down":true})").status, 200);
  EXPECT_EQ(backend.last_cluster, "beta gamma");
}

TEST_F(ApiRoutesTest, OutageBadBodies) {
  expect_problem(call("POST", "/api/v1/clusters/alpha/outage", "{down: yes"), 400,
                 "not valid JSON");
  expect_problem(call("POST", "/api/v1/clusters/alpha/outage", ""), 400, "not valid JSON");
  expect_problem(call("POST", "/api/v1/clusters/alpha/outage", R"({"down":"yes"})"), 422, "down");
  expect_problem(call("POST", "/api/v1/clusters/alpha/outage", "[1,2]"), 422, "down");
  expect_problem(call("POST", "/api/v1/clusters/nope/outage", R"({"down":true})"), 404, "nope");
}

TEST_F(ApiRoutesTest, ClusterNodes) {
  auto r = call("GET", "/api/v1/clusters/alpha/nodes");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  json body = parsed(r);
  EXPECT_EQ(body["cluster"], "alpha");
  EXPECT_EQ(body["nodes"].size(), 2u);
  EXPECT_EQ(body["events"].size(), 2u);
  EXPECT_EQ(backend.last_event_limit, 50) << "the default";
  r = call("GET", "/api/v1/clusters/alpha/nodes?limit=1");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(backend.last_event_limit, 1);
  EXPECT_EQ(parsed(r)["events"].size(), 1u);
}

TEST_F(ApiRoutesTest, ClusterNodesErrors) {
  expect_problem(call("GET", "/api/v1/clusters/zeta/nodes"), 404, "no cluster named \"zeta\"");
  expect_problem(call("GET", "/api/v1/clusters/alpha/nodes?limit=0"), 400, "limit");
  expect_problem(call("GET", "/api/v1/clusters/alpha/nodes?limit=1001"), 400, "limit");
  expect_problem(call("GET", "/api/v1/clusters/alpha/nodes?limit=x"), 400, "limit");
  EXPECT_EQ(call("POST", "/api/v1/clusters/alpha/nodes").status, 405);
  backend.fail = make_error(ErrorKind::io, "disk I/O error");
  expect_problem(call("GET", "/api/v1/clusters/alpha/nodes"), 500, "disk I/O error");
}

TEST_F(ApiRoutesTest, ListJobsWithFilters) {
  auto r = call("GET", "/api/v1/jobs?state=running&cluster=alpha&limit=5");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(parsed(r)["jobs"].size(), 2u);
  EXPECT_EQ(backend.last_filter.state, "running");
  EXPECT_EQ(backend.last_filter.cluster, "alpha");
  EXPECT_EQ(backend.last_filter.limit, 5);
  call("GET", "/api/v1/jobs");
  EXPECT_FALSE(backend.last_filter.state.has_value());
  EXPECT_FALSE(backend.last_filter.cluster.has_value());
  EXPECT_EQ(backend.last_filter.limit, 100);
}

TEST_F(ApiRoutesTest, ListJobsBadParams) {
  expect_problem(call("GET", "/api/v1/jobs?state=sleeping"), 400, "unknown job state 'sleeping'");
  expect_problem(call("GET", "/api/v1/jobs?limit=abc"), 400, "limit");
  expect_problem(call("GET", "/api/v1/jobs?limit=0"), 400, "limit");
  expect_problem(call("GET", "/api/v1/jobs?limit=-3"), 400, "limit");
  expect_problem(call("GET", "/api/v1/jobs?limit=99999999999999999999"), 400, "limit");
}

TEST_F(ApiRoutesTest, SubmitYamlAndJson) {
  for (const char* type : {"application/yaml", "text/yaml", "application/json",
                           "application/yaml; charset=utf-8", ""}) {
    auto r = call("POST", "/api/v1/jobs?source=jobs%2Fa.yaml", "name: a\n", type);
    EXPECT_EQ(r.status, 201) << type;
    EXPECT_EQ(r.header("Location"), "/api/v1/jobs/3");
    EXPECT_EQ(parsed(r)["id"], 3);
  }
  EXPECT_EQ(backend.last_source, "jobs/a.yaml");
  EXPECT_EQ(backend.last_body, "name: a\n");
  call("POST", "/api/v1/jobs", "name: a\n", "application/yaml");
  EXPECT_EQ(backend.last_source, "request body");
}

TEST_F(ApiRoutesTest, SubmitErrors) {
  expect_problem(call("POST", "/api/v1/jobs", "name: bad\n", "application/yaml"), 422,
                 "gpus_per_node must be positive");
  expect_problem(call("POST", "/api/v1/jobs", "  \n", "application/yaml"), 400, "empty");
  expect_problem(call("POST", "/api/v1/jobs", "x", "image/png"), 415, "image/png");
  backend.fail = make_error(ErrorKind::unreachable, "brain is busy");
  expect_problem(call("POST", "/api/v1/jobs", "name: a", "application/yaml"), 503, "brain");
}

TEST_F(ApiRoutesTest, JobReads) {
  auto job = call("GET", "/api/v1/jobs/1");
  EXPECT_EQ(job.status, 200);
  EXPECT_EQ(parsed(job)["spec"]["name"], "llama-8b");
  EXPECT_EQ(parsed(call("GET", "/api/v1/jobs/1/attempts"))["attempts"].size(), 2u);
  EXPECT_EQ(parsed(call("GET", "/api/v1/jobs/1/events"))["events"].size(), 12u);
  EXPECT_EQ(parsed(call("GET", "/api/v1/jobs/2/explain"))["job_id"], 2);
  expect_problem(call("GET", "/api/v1/jobs/7"), 404, "no job with id 7");
  expect_problem(call("GET", "/api/v1/jobs/7/attempts"), 404);
  expect_problem(call("GET", "/api/v1/jobs/7/events"), 404);
  expect_problem(call("GET", "/api/v1/jobs/7/explain"), 404);
}

TEST_F(ApiRoutesTest, Logs) {
  auto r = call("GET", "/api/v1/jobs/1/logs");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(r.body, backend.logs);
  EXPECT_EQ(r.header("X-Next-Offset"), std::to_string(backend.logs.size()));
  EXPECT_FALSE(backend.last_log.attempt_no.has_value());
  r = call("GET", "/api/v1/jobs/1/logs?attempt=2&offset=5");
  EXPECT_EQ(r.body, backend.logs.substr(5));
  EXPECT_EQ(backend.last_log.attempt_no, 2);
  EXPECT_EQ(backend.last_log.offset, 5u);
  expect_problem(call("GET", "/api/v1/jobs/1/logs?attempt=0"), 400, "attempt");
  expect_problem(call("GET", "/api/v1/jobs/1/logs?attempt=x"), 400, "attempt");
  expect_problem(call("GET", "/api/v1/jobs/1/logs?offset=-1"), 400, "offset");
  expect_problem(call("GET", "/api/v1/jobs/9/logs"), 404);
}

TEST_F(ApiRoutesTest, Cancel) {
  auto r = call("POST", "/api/v1/jobs/1/cancel");
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(parsed(r)["id"], 1);
  expect_problem(call("POST", "/api/v1/jobs/2/cancel"), 409, "already succeeded");
  expect_problem(call("POST", "/api/v1/jobs/5/cancel"), 404);
}

TEST_F(ApiRoutesTest, BadIdsAre400WithAMessage) {
  for (const char* id : {"abc", "-1", "0", "99999999999999999999", "1.5", "%20", "1e3", "+1"}) {
    for (const char* suffix : {"", "/attempts", "/events", "/explain", "/logs"}) {
      expect_problem(call("GET", std::string("/api/v1/jobs/") + id + suffix), 400,
                     "job id must be a positive integer");
    }
    expect_problem(call("POST", std::string("/api/v1/jobs/") + id + "/cancel"), 400, "job id");
  }
  const std::string huge(5000, '7');
  auto r = call("GET", "/api/v1/jobs/" + huge);
  expect_problem(r, 400, "...");
  EXPECT_LT(r.body.size(), 400u);  // the message does not echo the whole input
}

TEST_F(ApiRoutesTest, ErrorKindMapping) {
  const std::pair<ErrorKind, int> cases[] = {
      {ErrorKind::invalid, 400},     {ErrorKind::not_found, 404},   {ErrorKind::conflict, 409},
      {ErrorKind::unsupported, 501}, {ErrorKind::unreachable, 503}, {ErrorKind::io, 500},
      {ErrorKind::internal, 500}};
  for (auto [kind, status] : cases) {
    backend.fail = make_error(kind, "scripted failure");
    expect_problem(call("GET", "/api/v1/clusters"), status, "scripted failure");
    expect_problem(call("GET", "/api/v1/jobs/1"), status, "scripted failure");
  }
}

TEST_F(ApiRoutesTest, UnknownRouteIs404) {
  expect_problem(call("GET", "/api/v1/nope"), 404, "/api/v1/nope");
  expect_problem(call("GET", "/"), 404);
  expect_problem(call("GET", "/api/v1/jobs/1/attempts/extra"), 404);
}

TEST_F(ApiRoutesTest, WrongMethodIs405WithAllow) {
  auto r = call("DELETE", "/api/v1/jobs");
  expect_problem(r, 405, "DELETE");
  EXPECT_EQ(r.header("Allow"), "GET, POST");
  r = call("GET", "/api/v1/jobs/1/cancel");
  expect_problem(r, 405);
  EXPECT_EQ(r.header("Allow"), "POST");
  EXPECT_EQ(call("PUT", "/api/v1/clusters").header("allow"), "GET, POST");
  EXPECT_EQ(call("GET", "/api/v1/clusters/alpha/outage").status, 405);
}

TEST_F(ApiRoutesTest, ABackendThatThrowsIs500) {
  backend.throw_on_list_clusters = true;
  expect_problem(call("GET", "/api/v1/clusters"), 500, "boom");
}

TEST_F(ApiRoutesTest, NeverCrashesOnOddInput) {
  const char* targets[] = {"",
                           "?",
                           "??",
                           "/api/v1/jobs?&&&=&",
                           "/api/v1/jobs?state=%ZZ",
                           "/api/v1/jobs/%00",
                           "/api/v1/jobs/1/logs?offset=%FF%FF",
                           "//api//v1//jobs",
                           "/api/v1/clusters/%2F/outage"};
  for (const char* target : targets) {
    for (const char* method : {"GET", "POST", "PATCH", ""}) {
      auto r = call(method, target, std::string("\xff\xfe{", 3), "application/json");
      EXPECT_GE(r.status, 200) << method << " " << target;
      EXPECT_LT(r.status, 600);
    }
  }
}

}  // namespace
}  // namespace orch
