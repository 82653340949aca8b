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

TEST(Scenario, AJobsOwnFailuresAndFreshNodesAreReadFromTheFailuresSection) {
  auto plain = parse_scenario(kMinimal, "s.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->job.mtbf_s, 0);                   // none unless said
  EXPECT_FALSE(plain->clusters[0].law.fresh_nodes);  // nodes of every age unless said
  auto s = parse_scenario(std::string("failures: {law: weibull, shape: 0.7, job_mtbf_h: 200, "
                                      "fresh_nodes: true}\n") +
                              kMinimal + "\n",
                          "s.yaml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_DOUBLE_EQ(s->job.mtbf_s, 200 * 3600.0);
  EXPECT_TRUE(s->clusters[0].law.fresh_nodes);
  auto whole = parse_scenario(
      "clusters:\n  - {name: a, nodes: 4, mfu: 0.4}\n"
      "job: {nodes: 2, parameters: 7e9, checkpoint_every: 3e3, total_steps: 1e12}\n",
      "s.yaml");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole->job.checkpoint_every, 3000);
  EXPECT_EQ(whole->job.total_steps, 1'000'000'000'000);
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
      // Counts are whole (issue 45): half a step between saves is refused, not run as "never".
      {"clusters:\n  - {name: a, nodes: 4, mfu: 0.4}\n"
       "job: {parameters: 1e9, checkpoint_every: 0.5}\n",
       "s.yaml:3:42: checkpoint_every is 0.5, not a whole number"},
      {"clusters:\n  - {name: a, nodes: 4, mfu: 0.4}\njob:\n  parameters: 1e9\n"
       "  total_steps: 1000.25\n",
       "s.yaml:5:16: total_steps is 1000.25, not a whole number"},
      {"clusters:\n  - {name: a, nodes: 4, mfu: 0.4}\n"
       "job: {parameters: 1e9, tokens_per_step: 4096.5}\n",
       "tokens_per_step is 4096.5, not a whole number"},
      {"failures: {job_mtbf_h: -3}\nclusters:\n  - {name: a, nodes: 4, mfu: 0.4}\n"
       "job: {parameters: 1e9}\n",
       "s.yaml:1:24:"},
      {"failures: {fresh_nodes: maybe}\nclusters:\n  - {name: a, nodes: 4, mfu: 0.4}\n"
       "job: {parameters: 1e9}\n",
       "s.yaml:1:25:"},
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
