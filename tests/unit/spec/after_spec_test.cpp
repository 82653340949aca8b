// `after:` in a job spec (issue 45): the jobs a job waits for, each mistake named with its line
// and column, and the stored form (with the id the brain resolved) read back as written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/spec/after_section.h"
#include "scheduler/spec/job_spec_json.h"
#include "scheduler/spec/job_spec_parser.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

Result<JobSpec> parse(const std::string& after) {
  return parse_job_spec("name: eval\ncommand: python eval.py\nafter: " + after + "\n", "eval.yaml");
}

TEST(AfterSpec, AJobWaitsForJobsByNameOrIdToSucceedOrEnd) {
  auto spec = parse("[{job: train}, {job: 12, state: ended}]");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_EQ(spec->after.size(), 2u);
  EXPECT_EQ(spec->after[0].job, "train");
  EXPECT_EQ(spec->after[0].state, AfterState::succeeded);
  EXPECT_EQ(spec->after[1].job, "12");
  EXPECT_EQ(spec->after[1].state, AfterState::ended);
}

TEST(AfterSpec, AnUnknownStateIsRefusedWithItsPlace) {
  auto spec = parse("[{job: train, state: done}]");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.error().message, HasSubstr("eval.yaml:3:"));
  EXPECT_THAT(spec.error().message, HasSubstr("after[0].state is \"done\""));
  EXPECT_THAT(spec.error().message, HasSubstr("expected succeeded"));
}

TEST(AfterSpec, AJobListedTwiceOrNoListOrNoJobIsRefused) {
  EXPECT_THAT(parse("[{job: train}, {job: train, state: ended}]").error().message,
              HasSubstr("job \"train\" is listed twice in \"after\""));
  EXPECT_THAT(parse("train").error().message, HasSubstr("\"after\" must be a list"));
  EXPECT_THAT(parse("[{state: ended}]").error().message, HasSubstr("\"job\""));
  EXPECT_THAT(parse("[{job: \"a b\"}]").error().message,
              HasSubstr("eval.yaml:3:15: \"job\" must be 1 to 64 letters"));
}

TEST(AfterSpec, TheStoredFormKeepsTheResolvedIdThroughJson) {
  auto spec = parse("[{job: train}]");
  ASSERT_TRUE(spec.ok());
  spec->after[0].id = 12;
  auto back = job_spec_from_json(job_spec_to_json(*spec));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->after, spec->after);
}

TEST(AfterSpec, TheCheckpointVariableIsTheNameUpperCased) {
  EXPECT_EQ(after_checkpoint_env("train"), "ORCH_AFTER_TRAIN_CHECKPOINT");
  EXPECT_EQ(after_checkpoint_env("gpt-2.small_v1"), "ORCH_AFTER_GPT_2_SMALL_V1_CHECKPOINT");
}

}  // namespace
}  // namespace orch
