// The real backend's answers of the main reads against the OpenAPI document's schemas
// (web/openapi_read_schemas.cpp): every required field there, of the type the document says, so
// that a client generated from the document reads what the server really sends.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "scheduler/brain/brain.h"
#include "scheduler/runtime/brain_loop.h"
#include "tests/harness/builders.h"
#include "tests/unit/web/backend_fixture.h"
#include "web/backend/scheduler_backend.h"
#include "web/openapi_schemas.h"

namespace orch {
namespace {

using nlohmann::json;
using testing::make_cluster;
using testing::make_job;

bool has_type(const json& value, const std::string& type) {
  if (type == "null") return value.is_null();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "array") return value.is_array();
  return type == "object" && value.is_object();
}

// What is wrong with value under schema (the subset of JSON Schema the document uses), or "".
std::string misfit(const json& schemas, const json& schema, const json& value,
                   const std::string& at) {
  if (schema.contains("$ref")) {
    const std::string name = schema["$ref"].get<std::string>().substr(21);  // #/components/schemas/
    return misfit(schemas, schemas.at(name), value, at);
  }
  for (const json& part : schema.value("allOf", json::array())) {
    if (auto why = misfit(schemas, part, value, at); !why.empty()) return why;
  }
  if (schema.contains("oneOf")) {
    for (const json& part : schema["oneOf"]) {
      if (misfit(schemas, part, value, at).empty()) return "";
    }
    return at + ": " + value.dump() + " fits none of oneOf";
  }
  if (schema.contains("type")) {
    bool fits = false;
    for (const json& t : schema["type"].is_array() ? schema["type"] : json::array({schema["type"]}))
      fits = fits || has_type(value, t.get<std::string>());
    if (!fits) return at + ": " + value.dump() + " is not " + schema["type"].dump();
  }
  if (schema.contains("enum") && !std::count(schema["enum"].begin(), schema["enum"].end(), value))
    return at + ": " + value.dump() + " is not one of " + schema["enum"].dump();
  if (schema.contains("const") && schema["const"] != value) return at + ": not " + schema.dump();
  for (const json& key : schema.value("required", json::array())) {
    if (!value.contains(key.get<std::string>())) return at + ": no " + key.dump();
  }
  if (value.is_object()) {
    const json properties = schema.value("properties", json::object());
    for (const auto& [name, sub] : properties.items()) {
      if (!value.contains(name)) continue;
      if (auto why = misfit(schemas, sub, value[name], at + "." + name); !why.empty()) return why;
    }
  }
  if (value.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      auto why = misfit(schemas, schema["items"], value[i], at + "[" + std::to_string(i) + "]");
      if (!why.empty()) return why;
    }
  }
  return "";
}

class BackendAnswers : public BackendFixture {
 protected:
  void SetUp() override { open({make_cluster("alpha"), make_cluster("beta")}); }

  // A running job on alpha with a checkpoint, a failing node and a healthy one.
  std::int64_t a_running_job() {
    auto submitted = brain_->handle(SubmitJob{make_job().nodes(1).gpus(4).on({"alpha"})});
    EXPECT_TRUE(submitted.ok());
    OutboxRow launch = store_->pending_actions("alpha").value().at(0);
    handle(LaunchCompleted{launch.id, launch.token, LaunchResult{"4242", {"a1"}}, false});
    handle(AttemptObserved{"alpha", launch.token, RunPhase::running, std::nullopt, {}, {}, {}});
    handle(InventoryObserved{"alpha", {{{"a1", 4, true, "", 4}, {"a2", 4, false, "Xid 79", 0}}}});
    const AttemptRow first = store_->attempts_of(submitted->job_id).value().at(0);
    EXPECT_TRUE(
        store_->insert_checkpoint({0, submitted->job_id, first.id, 40, "/c/40", 1, 5}).ok());
    return submitted->job_id;
  }
  void expect_fits(const char* schema, const json& answer) {
    const json schemas = openapi_schemas();
    EXPECT_EQ(misfit(schemas, schemas.at(schema), answer, schema), "") << answer.dump(1);
  }
};

TEST_F(BackendAnswers, JobsAndAJobAreWhatTheDocumentSays) {
  const std::int64_t id = a_running_job();
  expect_fits("JobPage", json::parse(backend_->list_jobs(JobFilter{}).value().text));
  expect_fits("JobDetail", json::parse(backend_->get_job(id).value().text));
}

TEST_F(BackendAnswers, ClustersNodesAndTheScorecardsAreWhatTheDocumentSays) {
  a_running_job();
  expect_fits("ClusterList", backend_->list_clusters().value());
  expect_fits("ClusterNodes", backend_->cluster_nodes("alpha", 50).value());
  expect_fits("NodeList", backend_->list_nodes(NodeFilter{}).value());
  const json report = backend_->provider_report(30).value();
  ASSERT_FALSE(report["cards"].empty());
  expect_fits("ProviderReport", report);
}

TEST_F(BackendAnswers, TheCostReportByEveryGroupingIsWhatTheDocumentSays) {  // issue 45
  a_running_job();
  clock_.advance_ms(600'000);  // ten minutes of its GPUs
  for (const char* by : {"job", "team", "cluster", "vendor"}) {
    const json report = backend_->cost_report(CostQuery{by, ""}).value();
    ASSERT_FALSE(report["rows"].empty()) << by;
    expect_fits("CostReport", report);
  }
}

TEST_F(BackendAnswers, DatasetsAndTransfersAreWhatTheDocumentSays) {
  expect_fits("DatasetList", backend_->list_datasets().value());
  ASSERT_TRUE(store_->insert_dataset({"imagenet", std::nullopt, 0, 1}).value());
  TransferRow t;
  t.dataset = "imagenet";
  t.purpose = TransferPurpose::staging;
  t.job_id = 7;
  t.src_cluster = "alpha";
  t.dst_cluster = "beta";
  t.created_ms = 1;
  t.id = store_->insert_transfer(t).value();
  t.state = TransferState::done;
  t.bytes_total = t.bytes_done = t.copied_bytes = 100;
  t.copy_seconds = 1;
  t.updated_ms = 2;
  ASSERT_TRUE(store_->update_transfer(t).ok());
  TransferFilter all;
  all.all = true;
  const json list = backend_->list_transfers(all).value();
  ASSERT_EQ(list["transfers"].size(), 1u);
  expect_fits("TransferList", list);
  expect_fits("TransferThroughput", backend_->transfer_throughput(60).value());
}

TEST_F(BackendAnswers, TheSeriesIsWhatTheDocumentSays) {
  const std::int64_t id = a_running_job();
  const AttemptRow first = store_->attempts_of(id).value().at(0);
  ASSERT_TRUE(store_->add_series_step(first.id, 1, {1, 2.5, 4096, 0.5, 0.4, 10}).ok());
  ASSERT_TRUE(store_->add_series_step(first.id, 1, {2, {}, {}, {}, {}, 20}).ok());
  const json series = json::parse(backend_->job_series(id, 2000).value().text);
  ASSERT_EQ(series["attempts"].at(0)["points"].size(), 2u) << series.dump();
  ASSERT_EQ(series["checkpoints"].size(), 1u);
  expect_fits("JobSeries", series);
}

TEST(SchemaCheck, RefusesAnAnswerWithoutARequiredFieldOrOfAnotherType) {
  const json schemas = openapi_schemas();
  EXPECT_NE(misfit(schemas, schemas["Place"], json{{"cluster", "a"}}, "Place"), "");
  EXPECT_NE(misfit(schemas, schemas["Place"], json{{"cluster", 1}, {"path", "/p"}}, "Place"), "");
  EXPECT_EQ(misfit(schemas, schemas["Place"], json{{"cluster", "a"}, {"path", "/p"}}, "Place"), "");
}

}  // namespace
}  // namespace orch
