// The job spec's data fields (issue 5): checkpoint.replicate and datasets, read from YAML,
// refused with place and words, and kept in the stored JSON form.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "scheduler/spec/job_spec_json.h"
#include "scheduler/spec/job_spec_parser.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string job_with(const std::string& rest) {
  return "name: a\ncommand: b\n" + rest;
}

TEST(JobDataSpec, ReplicationDefaults) {
  auto r = parse_job_spec(job_with(""), "job.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ReplicationSpec& rep = r->checkpoint.replicate;
  EXPECT_TRUE(rep.enabled);
  EXPECT_EQ(rep.keep, 3);
  EXPECT_EQ(rep.copies, 2);
  EXPECT_EQ(rep.to, "");
  EXPECT_TRUE(r->datasets.empty());
}

TEST(JobDataSpec, ReadsReplicationAndDatasets) {
  auto r = parse_job_spec(
      job_with("checkpoint: {dir: ckpt, replicate: {enabled: true, keep: 5, copies: 3, to: beta}}\n"
               "datasets: [imagenet, c4, wiki-103.v2_en]\n"),
      "job.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ReplicationSpec& rep = r->checkpoint.replicate;
  EXPECT_TRUE(rep.enabled);
  EXPECT_EQ(rep.keep, 5);
  EXPECT_EQ(rep.copies, 3);
  EXPECT_EQ(rep.to, "beta");
  EXPECT_EQ(r->checkpoint.dir, "ckpt");
  EXPECT_EQ(r->datasets, (std::vector<std::string>{"imagenet", "c4", "wiki-103.v2_en"}));
}

TEST(JobDataSpec, ReplicationCanBeTurnedOffOrKeptOnOneSite) {
  auto off = parse_job_spec(job_with("checkpoint: {replicate: {enabled: false}}\n"), "job.yaml");
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_FALSE(off->checkpoint.replicate.enabled);
  auto one = parse_job_spec(job_with("checkpoint:\n  replicate:\n    copies: 1\n    keep: 1\n"),
                            "job.yaml");
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->checkpoint.replicate.copies, 1);
  EXPECT_EQ(one->checkpoint.replicate.keep, 1);
  auto empty = parse_job_spec(job_with("checkpoint: {replicate: }\ndatasets: []\n"), "job.yaml");
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  EXPECT_EQ(empty->checkpoint.replicate.copies, 2);
}

struct BadJob {
  const char* why;
  std::string yaml;
  std::string where;
  std::string message;
};

const BadJob kBad[] = {
    {"replicate a list", job_with("checkpoint: {replicate: [beta]}\n"), "3:25",
     "checkpoint.replicate must be a map, got a list; expected a map such as {enabled: true, "
     "keep: 3, copies: 2, to: beta}"},
    {"replicate typo", job_with("checkpoint: {replicate: {copis: 2}}\n"), "3:26",
     "unknown key \"copis\" in checkpoint.replicate; did you mean \"copies\"?"},
    {"enabled not a bool", job_with("checkpoint: {replicate: {enabled: yes}}\n"), "3:35",
     "\"enabled\" must be true or false, got \"yes\""},
    {"keep zero", job_with("checkpoint: {replicate: {keep: 0}}\n"), "3:32",
     "\"keep\" must be an integer >= 1, got \"0\"; expected a count of checkpoints such as 3"},
    {"copies zero", job_with("checkpoint: {replicate: {copies: 0}}\n"), "3:34",
     "\"copies\" must be an integer from 1 to 8, got \"0\""},
    {"copies nine", job_with("checkpoint: {replicate: {copies: 9}}\n"), "3:34",
     "\"copies\" must be an integer from 1 to 8, got \"9\"; expected a count of sites such as 2 "
     "(1: no off-site copy)"},
    {"to not a name", job_with("checkpoint: {replicate: {to: \"be ta\"}}\n"), "3:30",
     "\"to\" must be 1 to 64 letters, digits, \".\", \"_\" or \"-\""},
    {"to with one copy", job_with("checkpoint: {replicate: {copies: 1, to: beta}}\n"), "3:37",
     "\"to\" names an off-site cluster, but \"copies\" is 1 (no off-site copy); expected copies: "
     "2 or more with \"to\", or no \"to\""},
    {"datasets a string", job_with("datasets: imagenet\n"), "3:11",
     "\"datasets\" must be a list, got \"imagenet\"; expected a list of dataset names such as "
     "[imagenet, c4]"},
    {"dataset bad name", job_with("datasets: [imagenet, \"c 4\"]\n"), "3:22",
     "each item of \"datasets\" must be 1 to 64 letters, digits, \".\", \"_\" or \"-\", got "
     "the string \"c 4\""},
    {"dataset a map", job_with("datasets: [{name: c4}]\n"), "3:12",
     "each item of \"datasets\" must be 1 to 64 letters"},
    {"dataset twice", job_with("datasets:\n  - c4\n  - imagenet\n  - c4\n"), "6:5",
     "dataset \"c4\" is listed twice in \"datasets\"; expected each dataset once (first at line "
     "4)"},
    {"datasets typo", job_with("dataset: [c4]\n"), "3:1",
     "unknown key \"dataset\" in job; did you mean \"datasets\"?"},
};

class BadJobDataSpec : public ::testing::TestWithParam<BadJob> {};

TEST_P(BadJobDataSpec, IsRejectedWithPositionAndReason) {
  const BadJob& row = GetParam();
  auto r = parse_job_spec(row.yaml, "job.yaml");
  ASSERT_FALSE(r.ok()) << row.why << ": accepted";
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_THAT(r.error().message, StartsWith("job.yaml:" + row.where + ": "))
      << row.why << ": " << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr(row.message)) << row.why;
}

INSTANTIATE_TEST_SUITE_P(Table, BadJobDataSpec, ::testing::ValuesIn(kBad),
                         [](const ::testing::TestParamInfo<BadJob>& param_info) {
                           std::string name = param_info.param.why;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// --- the stored JSON form -------------------------------------------------------------------

TEST(JobDataSpecJson, NewFieldsRoundTrip) {
  JobSpec s;
  s.name = "a";
  s.command = "true";
  s.checkpoint.dir = "/ckpt";
  s.checkpoint.replicate = ReplicationSpec{false, 7, 4, "gamma"};
  s.datasets = {"imagenet", "c4"};
  nlohmann::json j = job_spec_to_json(s);
  EXPECT_EQ(j["checkpoint"]["replicate"],
            (nlohmann::json{{"enabled", false}, {"keep", 7}, {"copies", 4}, {"to", "gamma"}}));
  EXPECT_EQ(j["datasets"], (nlohmann::json{"imagenet", "c4"}));
  auto back = job_spec_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << j.dump(2);
  EXPECT_FALSE(back->checkpoint.replicate.enabled);
  EXPECT_EQ(back->checkpoint.replicate.keep, 7);
  EXPECT_EQ(back->checkpoint.replicate.copies, 4);
  EXPECT_EQ(back->checkpoint.replicate.to, "gamma");
  EXPECT_EQ(back->datasets, s.datasets);
  EXPECT_EQ(job_spec_to_json(*back).dump(), j.dump());
}

TEST(JobDataSpecJson, DefaultsAreWrittenAndAnUnnamedDestinationIsLeftOut) {
  JobSpec s;
  s.name = "a";
  s.command = "true";
  nlohmann::json j = job_spec_to_json(s);
  EXPECT_EQ(j["checkpoint"]["replicate"],
            (nlohmann::json{{"enabled", true}, {"keep", 3}, {"copies", 2}}));
  EXPECT_TRUE(j["datasets"].is_array());
  EXPECT_TRUE(j["datasets"].empty());
  auto back = job_spec_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->checkpoint.replicate.to, "");
  EXPECT_TRUE(back->datasets.empty());
}

TEST(JobDataSpecJson, SpecsStoredBeforeIssue5LoadWithDefaults) {
  // What job_spec_to_json wrote before replication and datasets existed.
  const auto old = nlohmann::json::parse(R"({
    "name": "old", "command": "python train.py", "env": {},
    "resources": {"nodes": 1, "gpus_per_node": 1},
    "checkpoint": {"dir": "/ckpt", "resume_env": "ORCH_RESUME_FROM"},
    "model": {},
    "restart": {"max_infra_restarts": 10, "max_user_restarts": 0,
                "backoff": {"initial_s": 10.0, "max_s": 600.0, "multiplier": 2.0}},
    "health": {"hang_after_s": 600.0, "mfu_drop_percent": 10.0},
    "placement": {"allowed": [], "preferred": []}})");
  auto r = job_spec_from_json(old);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->checkpoint.replicate.enabled);
  EXPECT_EQ(r->checkpoint.replicate.keep, 3);
  EXPECT_EQ(r->checkpoint.replicate.copies, 2);
  EXPECT_TRUE(r->datasets.empty());
  // An absolute checkpoint.dir, refused in a submission since issue 37, reads back as stored.
  EXPECT_EQ(r->checkpoint.dir, "/ckpt");
}

TEST(JobDataSpecJson, StoredSpecIsCheckedLikeASubmission) {
  JobSpec s;
  s.name = "a";
  s.command = "true";
  nlohmann::json j = job_spec_to_json(s);
  j["checkpoint"]["replicate"]["copies"] = 0;
  auto r = job_spec_from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("\"copies\" must be an integer from 1 to 8"));
}

}  // namespace
}  // namespace orch
