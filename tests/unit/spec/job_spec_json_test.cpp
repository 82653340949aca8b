// The stored (JSON) form of a job spec reads back exactly, and the model FLOPs formula.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "scheduler/spec/job_spec_json.h"
#include "scheduler/spec/job_spec_parser.h"

namespace orch {
namespace {

void expect_same(const JobSpec& a, const JobSpec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.command, b.command);
  EXPECT_EQ(a.env, b.env);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.gpus_per_node, b.gpus_per_node);
  EXPECT_EQ(a.checkpoint.dir, b.checkpoint.dir);
  EXPECT_EQ(a.checkpoint.resume_env, b.checkpoint.resume_env);
  EXPECT_EQ(a.checkpoint.interval_steps, b.checkpoint.interval_steps);
  EXPECT_EQ(a.model.parameters, b.model.parameters);  // bit-exact, not approximately
  EXPECT_EQ(a.model.flops_per_token, b.model.flops_per_token);
  EXPECT_EQ(a.model.layers, b.model.layers);
  EXPECT_EQ(a.model.hidden, b.model.hidden);
  EXPECT_EQ(a.model.sequence, b.model.sequence);
  EXPECT_EQ(a.restart.max_infra_restarts, b.restart.max_infra_restarts);
  EXPECT_EQ(a.restart.max_user_restarts, b.restart.max_user_restarts);
  EXPECT_EQ(a.restart.backoff.initial_s, b.restart.backoff.initial_s);
  EXPECT_EQ(a.restart.backoff.max_s, b.restart.backoff.max_s);
  EXPECT_EQ(a.restart.backoff.multiplier, b.restart.backoff.multiplier);
  EXPECT_EQ(a.allowed_clusters, b.allowed_clusters);
  EXPECT_EQ(a.preferred_clusters, b.preferred_clusters);
  EXPECT_EQ(a.owner, b.owner);
  EXPECT_EQ(a.team, b.team);
  EXPECT_EQ(a.secret_env, b.secret_env);
}

JobSpec full_spec() {
  JobSpec s;
  s.name = "toy-gpt.v2_run";
  s.command = "python train.py --lr 3e-4 \"quoted\" \\ back\nnext line\ttab é ✓";
  s.env = {{"LR", "3e-4"}, {"EMPTY", ""}, {"NULLISH", "null"}, {"NUM", "007"}, {"_X", "a: b"}};
  s.nodes = 3;
  s.gpus_per_node = 8;
  s.checkpoint.dir = "/ckpt/run 1";
  s.checkpoint.resume_env = "RESUME";
  s.checkpoint.interval_steps = 250;
  s.model.parameters = 6.7e9 + 0.1;  // not a round number in binary
  s.model.layers = 32;
  s.model.hidden = 4096;
  s.model.sequence = 2048;
  s.restart.max_infra_restarts = 0;
  s.restart.max_user_restarts = 2;
  s.restart.backoff = {0.1, 1.0 / 3.0 * 1000, 1.5};
  s.allowed_clusters = {"alpha", "beta"};
  s.preferred_clusters = {"beta"};
  s.owner = "alice";
  s.team = "vision";
  s.secret_env = {{"WANDB_API_KEY", "wandb"}, {"HF_TOKEN", "hf-token"}};
  return s;
}

TEST(JobSpecJson, AStoredSpecThatNamedAServerFileLoadsWithTheReferenceRetired) {
  nlohmann::json stored = job_spec_to_json(full_spec());
  stored["secret_env"]["OLD_KEY"] = {{"file", "/srv/state/admin.token"}};
  stored["secret_env"]["OLD_ENV"] = {{"env", "AWS_SECRET_ACCESS_KEY"}};
  auto back = job_spec_from_json(stored);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->secret_env.at("WANDB_API_KEY"), "wandb");
  EXPECT_EQ(back->secret_env.at("OLD_KEY"), "");  // never launched with it (secret_registry)
  EXPECT_EQ(back->secret_env.at("OLD_ENV"), "");
  const std::string again = job_spec_to_json(*back).dump();
  EXPECT_EQ(again.find("admin.token"), std::string::npos) << again;
  EXPECT_EQ(again.find("AWS_SECRET"), std::string::npos) << again;
  auto twice = job_spec_from_json(nlohmann::json::parse(again));
  ASSERT_TRUE(twice.ok()) << twice.error().message;
  EXPECT_EQ(twice->secret_env, back->secret_env);
}

TEST(JobSpecJson, FullSpecRoundTripsExactly) {
  JobSpec s = full_spec();
  nlohmann::json j = job_spec_to_json(s);
  auto back = job_spec_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << j.dump(2);
  expect_same(s, *back);
  // A second trip gives the very same JSON text: storage is stable.
  EXPECT_EQ(job_spec_to_json(*back).dump(), j.dump());
}

TEST(JobSpecJson, DefaultsRoundTripAndOptionalsStayUnset) {
  JobSpec s;
  s.name = "a";
  s.command = "true";
  s.model.flops_per_token = std::numeric_limits<double>::min();  // tiny but > 0
  nlohmann::json j = job_spec_to_json(s);
  EXPECT_FALSE(j["checkpoint"].contains("interval_steps"));
  EXPECT_FALSE(j["model"].contains("parameters"));
  EXPECT_FALSE(j.contains("owner"));  // none yet: the server sets it at submit
  EXPECT_FALSE(j.contains("team"));
  auto back = job_spec_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  expect_same(s, *back);
}

TEST(JobSpecJson, TheStallBoundKeysRoundTripAndStayOutAtTheirDefaults) {
  JobSpec s;
  s.name = "a";
  s.command = "true";
  EXPECT_FALSE(job_spec_to_json(s)["checkpoint"].contains("stall_factor"));
  s.checkpoint.stall_factor = 0;  // issue 43: no bound from the launch
  s.checkpoint.stall_min_s = 300;
  auto back = job_spec_from_json(job_spec_to_json(s));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->checkpoint.stall_factor, 0);
  EXPECT_EQ(back->checkpoint.stall_min_s, 300);
}

TEST(JobSpecJson, ShapeMatchesTheYamlFormat) {
  auto parsed =
      parse_job_spec("name: a\ncommand: b\nresources: {nodes: 2, gpus_per_node: 4}\n", "job.yaml");
  ASSERT_TRUE(parsed.ok());
  nlohmann::json j = job_spec_to_json(*parsed);
  EXPECT_EQ(j["resources"]["nodes"], 2);
  EXPECT_EQ(j["resources"]["gpus_per_node"], 4);
  EXPECT_EQ(j["restart"]["backoff"]["max_s"], 600.0);
  EXPECT_TRUE(j["placement"]["allowed"].is_array());
  // The stored form is itself a valid submission.
  auto again = parse_job_spec(j.dump(), "stored");
  ASSERT_TRUE(again.ok()) << again.error().message;
  expect_same(*parsed, *again);
}

TEST(JobSpecJson, BadJsonIsAnErrorNotACrash) {
  auto not_object = job_spec_from_json(nlohmann::json::array({1, 2}));
  ASSERT_FALSE(not_object.ok());
  EXPECT_EQ(not_object.error().kind, ErrorKind::invalid);
  EXPECT_THAT(not_object.error().message, ::testing::HasSubstr("expected a JSON object"));

  auto wrong_type =
      job_spec_from_json({{"name", "a"}, {"command", "b"}, {"resources", {{"nodes", "x"}}}});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_THAT(
      wrong_type.error().message,
      ::testing::HasSubstr("\"nodes\" must be an integer from 1 to 100000, got the string \"x\""));

  auto bad_utf8 = job_spec_from_json({{"name", "a"}, {"command", std::string("\xff\xfe")}});
  ASSERT_FALSE(bad_utf8.ok());
  EXPECT_THAT(bad_utf8.error().message, ::testing::HasSubstr("UTF-8"));
}

TEST(ModelFlops, NothingGivenIsUnknown) {
  EXPECT_FALSE(model_flops_per_token(ModelSpec{}));
}

TEST(ModelFlops, ParametersAloneIsSixN) {
  ModelSpec m;
  m.parameters = 7e9;
  EXPECT_DOUBLE_EQ(*model_flops_per_token(m), 4.2e10);
}

TEST(ModelFlops, AttentionTermAddsTwelveLHS) {
  ModelSpec m;
  m.parameters = 7e9;
  m.layers = 32;
  m.hidden = 4096;
  m.sequence = 4096;
  // 12 * 32 * 4096 * 4096 = 6,442,450,944: far beyond int, so the product must be in double.
  EXPECT_DOUBLE_EQ(*model_flops_per_token(m), 4.2e10 + 6442450944.0);
}

TEST(ModelFlops, PartialAttentionShapeIsIgnored) {
  ModelSpec m;
  m.parameters = 1e9;
  m.layers = 32;
  m.hidden = 4096;
  EXPECT_DOUBLE_EQ(*model_flops_per_token(m), 6e9);
}

TEST(ModelFlops, ExplicitFlopsPerTokenWins) {
  ModelSpec m;
  m.flops_per_token = 1.23e11;
  m.parameters = 7e9;  // the parser forbids both; the formula still prefers the explicit one
  EXPECT_EQ(*model_flops_per_token(m), 1.23e11);
}

TEST(ModelFlops, ParsedSpecFeedsTheFormula) {
  auto r = parse_job_spec("name: a\ncommand: b\nmodel: {parameters: 7.0e9}\n", "job.yaml");
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(*model_flops_per_token(r->model), 4.2e10);
}

}  // namespace
}  // namespace orch
