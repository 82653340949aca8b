// The checkpoint and data routes over the fake backend, without sockets: a job's checkpoints,
// datasets (list, register), replication, transfers and the audit; every body check and error
// status.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/unit/web/routes_fixture.h"
#include "web/api_routes.h"
#include "web/data_routes.h"

namespace orch {
namespace {

using nlohmann::json;

// Only the data routes, over the data fake: nothing here needs another route.
class DataRoutesTest : public testing::RoutesOver<testing::FakeDataApi> {};

TEST_F(DataRoutesTest, JobCheckpoints) {
  auto r = call("GET", "/api/v1/jobs/1/checkpoints");
  EXPECT_EQ(r.status, 200) << r.body;
  json body = parsed(r);
  EXPECT_EQ(body["job"], 1);
  ASSERT_EQ(body["checkpoints"].size(), 2u);
  EXPECT_EQ(body["checkpoints"][0]["step"], 1000);
  EXPECT_EQ(body["checkpoints"][0]["replicas"][1]["state"], "copying");
  EXPECT_EQ(parsed(call("GET", "/api/v1/jobs/2/checkpoints"))["checkpoints"], json::array());
  expect_problem(call("GET", "/api/v1/jobs/9/checkpoints"), 404, "no job with id 9");
  expect_problem(call("GET", "/api/v1/jobs/0/checkpoints"), 400,
                 "job id must be a positive integer, got '0'");
  EXPECT_EQ(call("POST", "/api/v1/jobs/1/checkpoints").status, 405);
}

TEST_F(DataRoutesTest, ListDatasets) {
  auto r = call("GET", "/api/v1/data/datasets");
  EXPECT_EQ(r.status, 200);
  json body = parsed(r);
  ASSERT_EQ(body["datasets"].size(), 2u);
  EXPECT_EQ(body["datasets"][0]["name"], "imagenet");
  backend.fail = make_error(ErrorKind::io, "disk I/O error");
  expect_problem(call("GET", "/api/v1/data/datasets"), 500, "disk I/O error");
}

TEST_F(DataRoutesTest, RegisterDataset) {
  auto r = call("POST", "/api/v1/data/datasets",
                R"({"name": "c4.en-v2_1", "cluster": "alpha", "path": "/data/c4"})");
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(parsed(r)["name"], "c4.en-v2_1");
  EXPECT_EQ(parsed(r)["message"],
            "dataset c4.en-v2_1 registered at alpha:/data/c4; its manifest is computed there");
  EXPECT_EQ(backend.last_dataset, "c4.en-v2_1");
  EXPECT_EQ(backend.last_dataset_cluster, "alpha");
  EXPECT_EQ(backend.last_dataset_path, "/data/c4");
}

TEST_F(DataRoutesTest, RegisterDatasetErrors) {
  const std::string path = "/api/v1/data/datasets";
  auto with = [](json body) { return body.dump(); };
  const json good = {{"name", "c4"}, {"cluster", "alpha"}, {"path", "/data/c4"}};
  expect_problem(call("POST", path), 400, "the request body is empty");
  expect_problem(call("POST", path, "{name"), 400, "not valid JSON");
  expect_problem(call("POST", path, "[1]"), 422, "expected a JSON object");
  for (const char* key : {"name", "cluster", "path"}) {
    json body = good;
    body.erase(key);
    expect_problem(call("POST", path, with(body)), 422, std::string("\"") + key + "\" is required");
    body[key] = 7;
    expect_problem(call("POST", path, with(body)), 422,
                   std::string("\"") + key + "\" must be a string");
  }
  const std::vector<std::string> bad_names = {
      "", "a b", "../x", "x/y", "..", "ünï", std::string(65, 'a')};
  for (const std::string& bad : bad_names) {
    json body = good;
    body["name"] = bad;
    expect_problem(call("POST", path, with(body)), 422, "is not valid: use 1 to 64 letters");
  }
  json body = good;
  body["name"] = std::string(64, 'a');
  EXPECT_EQ(call("POST", path, with(body)).status, 201) << "100 characters is the limit";
  body = good;
  body["path"] = "data/c4";
  expect_problem(call("POST", path, with(body)), 422,
                 "\"path\" must be an absolute path on the cluster (starting with '/'), got "
                 "'data/c4'");
  body["path"] = "/data/c4\nrm -rf /";
  expect_problem(call("POST", path, with(body)), 422, "control characters");
  body["path"] = "/" + std::string(5000, 'x');
  expect_problem(call("POST", path, with(body)), 422, "longer than 4096");
  body = good;
  body["cluster"] = "";
  expect_problem(call("POST", path, with(body)), 422, "\"cluster\" must name a configured");
  body["cluster"] = "zeta";
  expect_problem(call("POST", path, with(body)), 422,
                 "no cluster named \"zeta\"; configured: alpha, beta-long-name");
  body = good;
  body["cluster"] = "beta-long-name";
  expect_problem(call("POST", path, with(body)), 501, "cannot hold datasets yet");
  EXPECT_EQ(backend.last_dataset, std::string(64, 'a')) << "no bad request reached the backend";
}

TEST_F(DataRoutesTest, ValidDatasetName) {
  EXPECT_TRUE(valid_dataset_name("imagenet-1k_v2.0"));
  EXPECT_TRUE(valid_dataset_name(".hidden"));
  EXPECT_FALSE(valid_dataset_name("."));
  EXPECT_FALSE(valid_dataset_name("..."));
  EXPECT_FALSE(valid_dataset_name("a:b"));
}

TEST_F(DataRoutesTest, Replicate) {
  auto r = call("POST", "/api/v1/data/replicate", R"({"dataset": "imagenet", "to": "alpha"})");
  EXPECT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(parsed(r), json({{"transfer", 8}, {"message", "copying dataset imagenet to alpha"}}));
  EXPECT_EQ(backend.last_replicate.dataset, "imagenet");
  EXPECT_EQ(backend.last_replicate.job_id, 0);
  EXPECT_EQ(backend.last_replicate.to, "alpha");
  r = call("POST", "/api/v1/data/replicate", R"({"job": 1, "to": "beta-long-name"})");
  EXPECT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(parsed(r)["transfer"], 7);
  EXPECT_EQ(backend.last_replicate.job_id, 1);
  EXPECT_EQ(backend.last_replicate.dataset, "");
  r = call("POST", "/api/v1/data/replicate", R"({"dataset": "tiny", "to": "alpha", "job": null})");
  EXPECT_EQ(r.status, 202) << r.body;
  EXPECT_TRUE(parsed(r)["transfer"].is_null());
}

TEST_F(DataRoutesTest, ReplicateErrors) {
  const std::string path = "/api/v1/data/replicate";
  expect_problem(call("POST", path), 400, "the request body is empty");
  expect_problem(call("POST", path, "nope"), 400, "not valid JSON");
  expect_problem(call("POST", path, R"({"to": "alpha"})"), 422,
                 "give either \"dataset\" or \"job\", not neither");
  expect_problem(call("POST", path, R"({"dataset": "imagenet", "job": 1, "to": "alpha"})"), 422,
                 "not both");
  expect_problem(call("POST", path, R"({"dataset": "imagenet"})"), 422, "\"to\" is required");
  expect_problem(call("POST", path, R"({"dataset": "imagenet", "to": ""})"), 422,
                 "\"to\" must name a configured cluster");
  expect_problem(call("POST", path, R"({"dataset": 3, "to": "alpha"})"), 422,
                 "\"dataset\" must be a string");
  expect_problem(call("POST", path, R"({"dataset": "a b", "to": "alpha"})"), 422,
                 "dataset name 'a b' is not valid");
  for (const char* job : {"0", "-2", "1.5", "\"1\"", "true"}) {
    expect_problem(call("POST", path, std::string(R"({"job": )") + job + R"(, "to": "alpha"})"),
                   422, "\"job\" must be a positive integer job id");
  }
  expect_problem(call("POST", path, R"({"dataset": "imagenet", "to": "zeta"})"), 422,
                 "no cluster named \"zeta\"");
  expect_problem(call("POST", path, R"({"dataset": "places", "to": "alpha"})"), 404,
                 "no dataset named \"places\"");
  expect_problem(call("POST", path, R"({"job": 9, "to": "alpha"})"), 404, "no job with id 9");
  EXPECT_EQ(call("GET", path).status, 405);
}

TEST_F(DataRoutesTest, ListTransfers) {
  auto r = call("GET", "/api/v1/data/transfers");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(backend.last_transfer_filter.all);
  EXPECT_EQ(backend.last_transfer_filter.limit, 100) << "the default";
  json body = parsed(r);
  ASSERT_EQ(body["transfers"].size(), 2u);
  EXPECT_EQ(body["transfers"][1]["what"], "step 1000 of job 1");
  EXPECT_EQ(body["transfers"][1]["from"]["cluster"], "alpha");
  ASSERT_EQ(body["groups"].size(), 2u);
  EXPECT_EQ(body["groups"][1]["label"], "checkpoint replication of job 1");
  EXPECT_TRUE(body["next"].is_null());
  r = call("GET", "/api/v1/data/transfers?all=true&limit=2");
  EXPECT_TRUE(backend.last_transfer_filter.all);
  EXPECT_EQ(backend.last_transfer_filter.limit, 2);
  EXPECT_EQ(parsed(r)["transfers"].size(), 2u);
  call("GET", "/api/v1/data/transfers?all=1");
  EXPECT_TRUE(backend.last_transfer_filter.all);
  call("GET", "/api/v1/data/transfers?all=false");
  EXPECT_FALSE(backend.last_transfer_filter.all);
  expect_problem(call("GET", "/api/v1/data/transfers?all=yes"), 400,
                 "all must be true or false, got 'yes'");
  expect_problem(call("GET", "/api/v1/data/transfers?limit=0"), 400,
                 "limit must be an integer from 1 to 1000");
  EXPECT_EQ(call("DELETE", "/api/v1/data/transfers").status, 405);
}

TEST_F(DataRoutesTest, TransfersComeAPageAtATimeFromTheCursor) {
  json first = parsed(call("GET", "/api/v1/data/transfers?all=true&limit=2"));
  EXPECT_EQ(backend.last_transfer_filter.cursor, 0) << "none: the newest page";
  ASSERT_TRUE(first["next"].is_string()) << first;
  EXPECT_EQ(first["next"], "7");
  auto r = call("GET", "/api/v1/data/transfers?all=true&limit=2&cursor=7");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(backend.last_transfer_filter.cursor, 7);
  EXPECT_EQ(parsed(r)["transfers"][0]["id"], 6);
  EXPECT_TRUE(parsed(r)["next"].is_null());
  for (const char* bad : {"x", "0", "-3", "8.5"}) {
    expect_problem(call("GET", std::string("/api/v1/data/transfers?cursor=") + bad), 400,
                   "cursor must be the \"next\" value of a previous page");
  }
}

TEST_F(DataRoutesTest, ThroughputOfTheLastHourByDefault) {
  auto r = call("GET", "/api/v1/data/throughput");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(backend.last_throughput_minutes, 60);
  EXPECT_EQ(parsed(r)["points"].size(), 2u);
  call("GET", "/api/v1/data/throughput?minutes=10080");
  EXPECT_EQ(backend.last_throughput_minutes, 10080) << "a week, what the store keeps";
  expect_problem(call("GET", "/api/v1/data/throughput?minutes=10081"), 400,
                 "minutes must be an integer from 1 to 10080");
  expect_problem(call("GET", "/api/v1/data/throughput?minutes=0"), 400,
                 "minutes must be an integer from 1 to 10080");
  EXPECT_EQ(call("POST", "/api/v1/data/throughput").status, 405);
}

TEST_F(DataRoutesTest, OneTransfer) {
  auto r = call("GET", "/api/v1/data/transfers/7");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(parsed(r)["id"], 7);
  EXPECT_EQ(parsed(r)["state"], "running");
  expect_problem(call("GET", "/api/v1/data/transfers/99"), 404, "no transfer with id 99");
  expect_problem(call("GET", "/api/v1/data/transfers/x"), 400,
                 "transfer id must be a positive integer, got 'x'");
}

TEST_F(DataRoutesTest, Audit) {
  auto r = call("POST", "/api/v1/data/audit");
  EXPECT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(parsed(r), json({{"message", "auditing 3 copies at every cluster"}}));
  EXPECT_EQ(backend.last_audit_cluster, "");
  r = call("POST", "/api/v1/data/audit", R"({"cluster": "alpha"})");
  EXPECT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(backend.last_audit_cluster, "alpha");
  EXPECT_EQ(call("POST", "/api/v1/data/audit", "{}").status, 202);
  EXPECT_EQ(backend.audits, 3);
  expect_problem(call("POST", "/api/v1/data/audit", "{"), 400, "not valid JSON");
  expect_problem(call("POST", "/api/v1/data/audit", R"({"cluster": 1})"), 422,
                 "\"cluster\" must be a string");
  expect_problem(call("POST", "/api/v1/data/audit", R"({"cluster": "zeta"})"), 422,
                 "no cluster named \"zeta\"");
  EXPECT_EQ(call("GET", "/api/v1/data/audit").status, 405);
}

}  // namespace
}  // namespace orch
