// Reading a simulation scenario (simulator/scenario.h): the example files read, defaults stand,
// and every mistake names its line, its column and what was expected.
#include <gmock/gmock.h>

#include <fstream>
#include <sstream>

#include "simulator/scenario.h"

namespace orch::sim {
namespace {

using ::testing::HasSubstr;

constexpr const char* kMinimal = R"(
clusters:
  - {name: a, nodes: 4, mfu: 0.4}
job: {nodes: 2, parameters: 7e9}
)";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Scenario, TheExamplesRead) {
  for (const char* name : {"lottery", "llama3", "identical"}) {
    const std::string path = std::string(ORCH_SOURCE_DIR) + "/examples/simulate/" + name + ".yaml";
    auto s = parse_scenario(read(path), path);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(s->name, name);
  }
  auto lottery = parse_scenario(
      read(std::string(ORCH_SOURCE_DIR) + "/examples/simulate/lottery.yaml"), "lottery.yaml");
  ASSERT_TRUE(lottery.ok());
  EXPECT_EQ(lottery->seeds, 20);
  ASSERT_EQ(lottery->clusters.size(), 3u);
  EXPECT_DOUBLE_EQ(lottery->clusters[2].lemon_fraction, 0.05);
  EXPECT_DOUBLE_EQ(lottery->clusters[2].lemon_multiplier, 20);
  EXPECT_EQ(lottery->job_nodes * lottery->job_gpus_per_node, 2048);
}

TEST(Scenario, DefaultsStandForWhatIsNotSaid) {
  auto s = parse_scenario(kMinimal, "s.yaml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->seeds, 1);
  EXPECT_DOUBLE_EQ(s->days, 30);
  EXPECT_EQ(s->policies.size(), 3u);
  EXPECT_EQ(s->job.name, "train");
  EXPECT_DOUBLE_EQ(s->job.flops_per_step, 6 * 7e9 * 4'194'304);
  EXPECT_DOUBLE_EQ(s->clusters[0].law.mtbf_s, 6335.0 * 3600);
  EXPECT_EQ(s->quarantine.at(0).failures, 2);
}

TEST(Scenario, MistakesSayWhereAndWhy) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"clusters: []\njob: {parameters: 1e9}\n",
       "s.yaml:1:11: \"clusters\" is not a non-empty list"},
      {"clusters:\n  - {name: a, nodes: 4, mfu: 1.5}\njob: {parameters: 1e9}\n", "s.yaml:2:"},
      {"clusters:\n  - {name: a, nodes: 4, mfu: 0.4, lemmons: {fraction: 0.1}}\n"
       "job: {parameters: 1e9}\n",
       "did you mean \"lemons\""},
      {"clusters:\n  - {name: a, nodes: 4, mfu: 0.4}\njob: {nodes: 8, parameters: 1e9}\n",
       "needs 8 nodes of 8 GPUs, more than any cluster has"},
      {"clusters:\n  - {name: a, nodes: 4, mfu: 0.4}\njob: {nodes: 2}\n",
       "the job needs \"parameters\" or \"flops_per_token\""},
      {"policies: [orchestrate, slurm-requeue]\nclusters:\n  - {name: a, nodes: 4, mfu: 0.4}\n"
       "job: {parameters: 1e9}\n",
       "unknown policy \"slurm-requeue\""},
      {"failures: {law: gamma}\nclusters:\n  - {name: a, nodes: 4, mfu: 0.4}\n"
       "job: {parameters: 1e9}\n",
       "unknown failure law \"gamma\""},
      {"clusters:\n  - {name: a, nodes: 4, mfu: 0.4}\n  - {name: a, nodes: 4, mfu: 0.4}\n"
       "job: {parameters: 1e9}\n",
       "cluster \"a\" is listed twice"},
      {"clusters: [", "s.yaml:1:"},
      {"job: {parameters: 1e9}\n", "missing required key \"clusters\""},
  };
  for (const Case& c : cases) {
    auto s = parse_scenario(c.text, "s.yaml");
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.error().kind, ErrorKind::invalid);
    EXPECT_THAT(s.error().message, HasSubstr(c.message)) << c.text;
  }
}

}  // namespace
}  // namespace orch::sim
