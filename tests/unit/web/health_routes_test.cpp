// The health routes over the fake backend, without sockets: nodes, quarantine and release,
// burn-in, probes, provider scorecards and MFU history; every parameter and error status.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/web/routes_fixture.h"
#include "web/api_routes.h"

namespace orch {
namespace {

using nlohmann::json;

class HealthRoutesTest : public testing::RoutesFixture {};

TEST_F(HealthRoutesTest, ListNodes) {
  auto r = call("GET", "/api/v1/nodes");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(parsed(r)["nodes"].size(), 3u);
  EXPECT_FALSE(backend.last_node_filter.cluster.has_value());
  EXPECT_FALSE(backend.last_node_filter.state.has_value());
  r = call("GET", "/api/v1/nodes?cluster=alpha&state=quarantined");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(backend.last_node_filter.cluster, "alpha");
  EXPECT_EQ(backend.last_node_filter.state, "quarantined");
  ASSERT_EQ(parsed(r)["nodes"].size(), 1u);
  EXPECT_EQ(parsed(r)["nodes"][0]["name"], "a2");
  call("GET", "/api/v1/nodes?cluster=&state=");
  EXPECT_FALSE(backend.last_node_filter.cluster.has_value()) << "empty means no filter";
}

TEST_F(HealthRoutesTest, ListNodesErrors) {
  expect_problem(call("GET", "/api/v1/nodes?state=broken"), 400,
                 "unknown node state 'broken'; expected one of active, quarantined, retired");
  expect_problem(call("GET", "/api/v1/nodes?cluster=zeta"), 404, "no cluster named \"zeta\"");
  EXPECT_EQ(call("POST", "/api/v1/nodes").status, 405);
  backend.fail = make_error(ErrorKind::io, "disk I/O error");
  expect_problem(call("GET", "/api/v1/nodes"), 500, "disk I/O error");
}

TEST_F(HealthRoutesTest, QuarantineAndRelease) {
  auto r =
      call("POST", "/api/v1/clusters/alpha/nodes/a2/quarantine", R"({"reason": "Xid 79 twice"})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(parsed(r), json({{"cluster", "alpha"}, {"node", "a2"}, {"state", "quarantined"}}));
  EXPECT_TRUE(backend.last_quarantine);
  EXPECT_EQ(backend.last_reason, "Xid 79 twice");
  r = call("POST", "/api/v1/clusters/alpha/nodes/a2/release");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(parsed(r)["state"], "active");
  EXPECT_FALSE(backend.last_quarantine);
  EXPECT_EQ(backend.last_reason, "") << "no body, no reason";
  EXPECT_EQ(call("POST", "/api/v1/clusters/alpha/nodes/a1/release", "{}").status, 200);
  EXPECT_EQ(backend.last_node, "a1");
}

TEST_F(HealthRoutesTest, QuarantineErrors) {
  const std::string path = "/api/v1/clusters/alpha/nodes/a2/quarantine";
  expect_problem(call("POST", path, "{reason"), 400, "not valid JSON");
  expect_problem(call("POST", path, R"({"reason": 7})"), 422, "reason");
  expect_problem(call("POST", path, R"(["x"])"), 422, "reason");
  expect_problem(call("POST", path, json{{"reason", std::string(1001, 'x')}}.dump()), 422,
                 "longer than 1000");
  expect_problem(call("POST", "/api/v1/clusters/alpha/nodes/a9/quarantine"), 404,
                 "cluster alpha has no node \"a9\"; its nodes: a1, a2");
  expect_problem(call("POST", "/api/v1/clusters/zeta/nodes/a1/release"), 404, "zeta");
  EXPECT_EQ(call("GET", path).status, 405);
}

TEST_F(HealthRoutesTest, DrainActivateRetire) {
  auto r = call("POST", "/api/v1/clusters/alpha/drain", R"({"reason": "maintenance"})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(parsed(r), json({{"cluster", "alpha"}, {"admission", "draining"}}));
  EXPECT_EQ(backend.last_reason, "maintenance");
  r = call("POST", "/api/v1/clusters/alpha/activate");
  EXPECT_EQ(parsed(r)["admission"], "active");
  EXPECT_EQ(backend.last_reason, "");
  r = call("POST", "/api/v1/clusters/alpha/retire", "{}");
  EXPECT_EQ(parsed(r)["admission"], "retired");
  expect_problem(call("POST", "/api/v1/clusters/alpha/activate"), 409,
                 "a retired cluster does not come back");
  expect_problem(call("POST", "/api/v1/clusters/zeta/drain"), 404, "zeta");
  expect_problem(call("POST", "/api/v1/clusters/alpha/drain", "{reason"), 400, "not valid JSON");
  expect_problem(call("POST", "/api/v1/clusters/alpha/retire", R"({"reason": 7})"), 422, "reason");
  EXPECT_EQ(call("GET", "/api/v1/clusters/alpha/drain").status, 405);
}

TEST_F(HealthRoutesTest, Tickets) {
  auto r = call("POST", "/api/v1/tickets",
                R"({"cluster": "alpha", "summary": "a2 IB link", "nodes": ["a2"]})");
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(parsed(r)["id"], 1);
  EXPECT_EQ(parsed(r)["state"], "open");
  r = call("POST", "/api/v1/tickets/1/updates", R"({"text": "on it", "from_provider": true})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(parsed(r)["first_response_ms"], 1700005400000);
  r = call("POST", "/api/v1/tickets/1/close", R"({"resolution": "cable"})");
  EXPECT_EQ(parsed(r)["state"], "closed");
  r = call("GET", "/api/v1/tickets?cluster=alpha&state=closed&limit=5");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(parsed(r)["tickets"].size(), 1u);
  EXPECT_EQ(backend.last_ticket_query, "alpha|closed|5");
  EXPECT_EQ(call("GET", "/api/v1/tickets/1").status, 200);
}

TEST_F(HealthRoutesTest, TicketErrors) {
  expect_problem(call("POST", "/api/v1/tickets", ""), 400, "empty");
  expect_problem(call("POST", "/api/v1/tickets", "{"), 400, "not valid JSON");
  expect_problem(call("POST", "/api/v1/tickets", R"({"cluster": "alpha"})"), 422,
                 "\"summary\" is required");
  expect_problem(call("POST", "/api/v1/tickets", R"({"cluster": "alpha", "summary": 3})"), 422,
                 "must be a string");
  expect_problem(
      call("POST", "/api/v1/tickets", R"({"cluster": "alpha", "summary": "x", "nodes": "a2"})"),
      422, "\"nodes\" must be a list");
  expect_problem(
      call("POST", "/api/v1/tickets", R"({"cluster": "alpha", "summary": "x", "nodes": [1]})"), 422,
      "node names");
  expect_problem(call("POST", "/api/v1/tickets", R"({"cluster": "alpha", "summary": ""})"), 422,
                 "the summary is empty");
  expect_problem(call("POST", "/api/v1/tickets", R"({"cluster": "zeta", "summary": "x"})"), 404,
                 "zeta");
  expect_problem(call("GET", "/api/v1/tickets?state=lost"), 400, "open or closed");
  expect_problem(call("GET", "/api/v1/tickets/abc"), 400, "ticket id must be a positive integer");
  expect_problem(call("GET", "/api/v1/tickets/7"), 404, "no ticket 7");
  expect_problem(call("POST", "/api/v1/tickets/7/updates", R"({"text": "x"})"), 404, "no ticket");
  expect_problem(call("POST", "/api/v1/tickets/1/updates", R"({"text": "x", "from_provider": 1})"),
                 422, "true or false");
  expect_problem(call("POST", "/api/v1/tickets/1/updates", "{}"), 422, "\"text\" is required");
}

TEST_F(HealthRoutesTest, ReloadClusters) {
  auto r = call("POST", "/api/v1/clusters/reload");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(parsed(r)["removed"], json({"beta-long-name"}));
  backend.reload_error = "the clusters file was not reloaded, nothing changed: c.yaml:3:5: bad";
  expect_problem(call("POST", "/api/v1/clusters/reload"), 422, "nothing changed: c.yaml:3:5");
  EXPECT_EQ(call("GET", "/api/v1/clusters/reload").status, 405);
}

TEST_F(HealthRoutesTest, AddClusters) {
  const std::string doc = "clusters:\n  - {name: gamma, provider: local}\n";
  auto r = call("POST", "/api/v1/clusters?source=gamma.yaml", doc, "application/yaml");
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(parsed(r)["added"], json({"gamma"}));
  EXPECT_EQ(backend.added_document, doc);
  EXPECT_EQ(backend.added_source, "gamma.yaml");
  call("POST", "/api/v1/clusters", doc, "application/yaml");
  EXPECT_EQ(backend.added_source, "request body");

  expect_problem(call("POST", "/api/v1/clusters", "nodes: 1\n", "application/yaml"), 422,
                 "\"clusters\" is required");
  expect_problem(
      call("POST", "/api/v1/clusters", "clusters:\n  - {name: alpha}\n", "application/yaml"), 409,
      "cluster \"alpha\" is already configured");
  expect_problem(call("POST", "/api/v1/clusters", " \n", "application/yaml"), 400,
                 "the request body is empty; send a clusters document");
  expect_problem(call("POST", "/api/v1/clusters", doc, "image/png"), 415,
                 "unsupported Content-Type 'image/png'; send a clusters document");
  EXPECT_EQ(call("PUT", "/api/v1/clusters", doc).status, 405);  // GET lists, POST adds
}

TEST_F(HealthRoutesTest, BurnIn) {
  auto r = call("POST", "/api/v1/clusters/alpha/burn-in");
  EXPECT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(parsed(r), json({{"cluster", "alpha"}, {"admission", "burn-in"}, {"round", "r2"}}));
  expect_problem(call("POST", "/api/v1/clusters/alpha/burn-in"), 409, "already burning in");
  expect_problem(call("POST", "/api/v1/clusters/zeta/burn-in"), 404, "zeta");
  EXPECT_EQ(call("GET", "/api/v1/clusters/alpha/burn-in").status, 405);
}

TEST_F(HealthRoutesTest, ClusterCheckRunsThePreflightAndAnswersEveryCheck) {
  auto r = call("POST", "/api/v1/clusters/alpha/check");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(parsed(r)["ok"], false);
  EXPECT_EQ(parsed(r)["checks"][0]["name"], "key-file");
  EXPECT_EQ(backend.checks, 1);
  expect_problem(call("POST", "/api/v1/clusters/zeta/check"), 404, "zeta");
  EXPECT_EQ(call("GET", "/api/v1/clusters/alpha/check").status, 405);
}

TEST_F(HealthRoutesTest, Probes) {
  auto r = call("GET", "/api/v1/clusters/alpha/probes");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(parsed(r)["probes"].size(), 3u);
  EXPECT_EQ(backend.last_probe_limit, 100) << "the default";
  EXPECT_EQ(backend.last_probe_node, "");
  r = call("GET", "/api/v1/clusters/alpha/probes?node=a1&limit=1");
  EXPECT_EQ(backend.last_probe_node, "a1");
  EXPECT_EQ(backend.last_probe_limit, 1);
  ASSERT_EQ(parsed(r)["probes"].size(), 1u);
  EXPECT_EQ(parsed(r)["probes"][0]["result"]["node"], "a1");
  expect_problem(call("GET", "/api/v1/clusters/alpha/probes?limit=0"), 400, "limit");
  expect_problem(call("GET", "/api/v1/clusters/zeta/probes"), 404, "zeta");
}

TEST_F(HealthRoutesTest, ProviderReport) {
  auto r = call("GET", "/api/v1/reports/providers");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(backend.last_window_days, 30) << "the default";
  json body = parsed(r);
  ASSERT_EQ(body["cards"].size(), 3u);
  EXPECT_TRUE(body["cards"][1]["node_mtbf_h"].is_null());
  call("GET", "/api/v1/reports/providers?window_days=7");
  EXPECT_EQ(backend.last_window_days, 7);
  for (const char* bad : {"0", "-1", "x", "3651"}) {
    expect_problem(call("GET", std::string("/api/v1/reports/providers?window_days=") + bad), 400,
                   "window_days must be an integer from 1 to 3650");
  }
  backend.fail = make_error(ErrorKind::io, "disk I/O error");
  expect_problem(call("GET", "/api/v1/reports/providers"), 500, "disk I/O error");
}

TEST_F(HealthRoutesTest, TheCostReportPassesItsGroupingAndDateAndABadOneIsA400) {  // issue 45
  auto r = call("GET", "/api/v1/reports/cost");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(backend.last_cost_query.by, "cluster") << "the default";
  EXPECT_EQ(backend.last_cost_query.since, "");
  call("GET", "/api/v1/reports/cost?by=team&since=2026-12-01");
  EXPECT_EQ(backend.last_cost_query.by, "team");
  EXPECT_EQ(backend.last_cost_query.since, "2026-12-01");
  backend.fail = make_error(ErrorKind::invalid, "by must be job, team, cluster or vendor");
  expect_problem(call("GET", "/api/v1/reports/cost?by=node"), 400,
                 "by must be job, team, cluster or vendor");
  backend.fail = make_error(ErrorKind::io, "disk I/O error");
  expect_problem(call("GET", "/api/v1/reports/cost"), 500, "disk I/O error");
}

TEST_F(HealthRoutesTest, JobMfu) {
  auto r = call("GET", "/api/v1/jobs/1/mfu");
  EXPECT_EQ(r.status, 200);
  json body = parsed(r);
  ASSERT_EQ(body["attempts"].size(), 1u);
  EXPECT_EQ(body["attempts"][0]["buckets"].size(), 2u);
  expect_problem(call("GET", "/api/v1/jobs/9/mfu"), 404, "no job with id 9");
  expect_problem(call("GET", "/api/v1/jobs/abc/mfu"), 400, "job id must be a positive integer");
}

TEST_F(HealthRoutesTest, ExistingRoutesStillMatch) {
  // The longer node paths must not shadow the cluster's node list.
  EXPECT_EQ(call("GET", "/api/v1/clusters/alpha/nodes").status, 200);
  EXPECT_EQ(call("GET", "/api/v1/clusters/alpha/nodes/a1/unknown").status, 404);
}

}  // namespace
}  // namespace orch
