// `job submit -e KEY=VALUE --set path=value` (issue 42): the spec's YAML changed before it is
// sent; every wrong argument is refused with a sentence naming it.

#include "cli/spec_overrides.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/spec/job_spec_parser.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

const char* const kSpec =
    "name: toy  # a comment\n"
    "command: python train.py\n"
    "env: {OMP_NUM_THREADS: \"1\"}\n"
    "resources: {nodes: 1, gpus_per_node: 2}\n"
    "datasets: [imagenet]\n";

std::string apply(SpecOverrides o, std::string& error, const std::string& spec = kSpec) {
  std::string out;
  if (!apply_spec_overrides(spec, "job.yaml", o, out, error)) return "";
  return out;
}

TEST(SpecOverrides, AnEnvFlagAddsOrReplacesAVariableAsAString) {
  std::string error;
  const std::string out = apply({{"LR=3e-4", "OMP_NUM_THREADS=8", "EMPTY=", "N=null"}, {}}, error);
  ASSERT_TRUE(error.empty()) << error;
  auto spec = parse_job_spec(out, "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message << "\n" << out;
  EXPECT_EQ(spec->env.at("LR"), "3e-4");
  EXPECT_EQ(spec->env.at("OMP_NUM_THREADS"), "8");
  EXPECT_EQ(spec->env.at("EMPTY"), "");
  EXPECT_EQ(spec->env.at("N"), "null");
  EXPECT_EQ(spec->name, "toy");
}

TEST(SpecOverrides, AnEnvFlagMakesTheEnvMapWhenTheSpecHasNone) {
  std::string error;
  const std::string out =
      apply({{"A=b=c"}, {}}, error, "name: x\ncommand: 'true'\nresources: {nodes: 1}\n");
  auto spec = parse_job_spec(out, "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message << "\n" << out;
  EXPECT_EQ(spec->env.at("A"), "b=c");  // the first '=' splits
}

TEST(SpecOverrides, ASetFlagSetsAnyKeyByItsDottedPath) {
  std::string error;
  const std::string out = apply({{},
                                 {"resources.gpus_per_node=4", "priority=10", "time_limit=1h",
                                  "datasets.0=c4", "checkpoint.interval_steps=50"}},
                                error);
  ASSERT_TRUE(error.empty()) << error;
  auto spec = parse_job_spec(out, "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message << "\n" << out;
  EXPECT_EQ(spec->gpus_per_node, 4);
  EXPECT_EQ(spec->priority, 10);
  EXPECT_EQ(spec->time_limit_s, 3600.0);
  EXPECT_EQ(spec->datasets, (std::vector<std::string>{"c4"}));
  EXPECT_THAT(out, HasSubstr("interval_steps: 50"));
}

TEST(SpecOverrides, ASetValueIsYamlSoAListOrAMapCanBeGiven) {
  std::string error;
  const std::string out = apply({{}, {"placement.allowed=[alpha, beta]"}}, error);
  auto spec = parse_job_spec(out, "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message << "\n" << out;
  EXPECT_EQ(spec->allowed_clusters, (std::vector<std::string>{"alpha", "beta"}));
}

TEST(SpecOverrides, AMalformedEnvFlagIsRefusedNamingIt) {
  for (const char* bad : {"LR", "=3", "1LR=3", "L-R=3", "L R=3"}) {
    std::string error;
    EXPECT_EQ(apply({{bad}, {}}, error), "") << bad;
    EXPECT_THAT(error, HasSubstr(std::string("-e ") + bad + ": expected KEY=VALUE")) << bad;
  }
}

TEST(SpecOverrides, AMalformedSetFlagIsRefusedSayingWhy) {
  struct Case {
    const char* arg;
    const char* why;
  } cases[] = {
      {"priority", "expected path=value"},
      {"=4", "expected path=value"},
      {"priority=", "no value after '='"},
      {"resources..gpus_per_node=4", "an empty key in resources..gpus_per_node"},
      {".priority=4", "an empty key"},
      {"name.first=x", "name is a value (toy), not a map or a list, so it has no key first"},
      {"datasets.3=x", "datasets is a list of 1 item(s), and 3 is not the index of one"},
      {"datasets.name=x", "and name is not the index of one"},
      {"priority=[1, 2", "the value is not YAML"},
  };
  for (const Case& c : cases) {
    std::string error;
    EXPECT_EQ(apply({{}, {c.arg}}, error), "") << c.arg;
    EXPECT_THAT(error, HasSubstr(std::string("--set ") + c.arg)) << c.arg;
    EXPECT_THAT(error, HasSubstr(c.why)) << c.arg;
  }
}

TEST(SpecOverrides, ASpecThatIsNotAMapOrNotYamlIsRefusedNamingTheFile) {
  std::string error;
  EXPECT_EQ(apply({{"A=1"}, {}}, error, "- a\n- b\n"), "");
  EXPECT_THAT(error, HasSubstr("job.yaml is a list, not a job spec"));
  EXPECT_EQ(apply({{"A=1"}, {}}, error, "name: [unclosed\n"), "");
  EXPECT_THAT(error, HasSubstr("job.yaml:"));
  EXPECT_THAT(error, HasSubstr("not YAML"));
  EXPECT_EQ(apply({{"A=1"}, {}}, error, "name: x\nenv: [A, B]\n"), "");
  EXPECT_THAT(error, HasSubstr("the spec's env is a list, not a map of variables"));
}

}  // namespace
}  // namespace orch

namespace orch {
namespace {

// Issue 45: `job submit --after NAME|ID[:succeeded|ended]`, appended to the spec's after.
TEST(SpecOverridesAfter, AnAfterFlagAppendsAJobToWaitFor) {
  std::string error;
  SpecOverrides o;
  o.after = {"train", "12:ended"};
  const std::string out = apply(o, error, std::string(kSpec) + "after: [{job: prep}]\n");
  ASSERT_TRUE(error.empty()) << error;
  auto spec = parse_job_spec(out, "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message << "\n" << out;
  ASSERT_EQ(spec->after.size(), 3u);
  EXPECT_EQ(spec->after[0].job, "prep");
  EXPECT_EQ(spec->after[1].job, "train");
  EXPECT_EQ(spec->after[1].state, AfterState::succeeded);
  EXPECT_EQ(spec->after[2].job, "12");
  EXPECT_EQ(spec->after[2].state, AfterState::ended);
}

TEST(SpecOverridesAfter, AnAfterFlagWithAnUnknownStateIsRefused) {
  std::string error;
  SpecOverrides o;
  o.after = {"train:done"};
  EXPECT_EQ(apply(o, error), "");
  EXPECT_THAT(error, HasSubstr("--after train:done: expected NAME or ID"));
}

}  // namespace
}  // namespace orch
