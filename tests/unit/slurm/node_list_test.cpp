// The node list: real sinfo outputs (Slurm 22.05 lab) and the states and GRES forms of newer
// releases (from Slurm's documentation), node health and GPU counts.
#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "adapters/slurm/slurm_parse.h"
#include "tests/unit/slurm/fixture.h"

namespace orch::slurm {
namespace {

using ::testing::ElementsAre;
using testing::fixture;
using ::testing::HasSubstr;

struct Expected {
  std::string name;
  std::string state;
  std::string complete;
  bool healthy;
  int gpus;
  int cpus;
  std::string reason;
  std::vector<std::string> partitions;
};

void expect_nodes(const std::string& file, const std::vector<Expected>& want) {
  SCOPED_TRACE(file);
  auto nodes = parse_node_list(fixture(file));
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const NodeRecord& n = (*nodes)[i];
    const Expected& w = want[i];
    SCOPED_TRACE(w.name);
    EXPECT_EQ(n.name, w.name);
    EXPECT_EQ(n.state, w.state);
    EXPECT_EQ(n.state_complete, w.complete);
    EXPECT_EQ(n.healthy, w.healthy);
    EXPECT_EQ(n.gpus, w.gpus);
    EXPECT_EQ(n.cpus, w.cpus);
    EXPECT_EQ(n.reason, w.reason);
    EXPECT_EQ(n.partitions, w.partitions);
  }
}

const std::vector<std::string> kBoth = {"batch", "gpu"};
const std::vector<std::string> kBatch = {"batch"};

TEST(slurm_parse_nodes, ArgvAsksForExplicitFieldsWithTheReasonLast) {
  EXPECT_THAT(node_list_argv(),
              ElementsAre("sinfo", "-h", "-N", "-O",
                          "NodeList:|,PartitionName:|,StateLong:|,StateComplete:|,CPUs:|,Gres:|,"
                          "Reason:|"));
}

TEST(slurm_parse_nodes, Lab2205IdleNodesInTwoPartitionsAreMerged) {
  expect_nodes("lab-22.05/sinfo-idle.txt", {{"alpha-n1", "idle", "idle", true, 8, 16, "", kBoth},
                                            {"alpha-n2", "idle", "idle", true, 8, 16, "", kBoth},
                                            {"alpha-n3", "idle", "idle", true, 8, 16, "", kBatch}});
  expect_nodes("lab-22.05/sinfo-busy.txt",
               {{"alpha-n1", "mixed", "mixed", true, 8, 16, "", kBoth},
                {"alpha-n2", "mixed", "mixed", true, 8, 16, "", kBoth},
                {"alpha-n3", "mixed", "mixed", true, 8, 16, "", kBatch}});
}

TEST(slurm_parse_nodes, Lab2205MaintenanceDrainingAndDownWithAReasonHoldingAPipe) {
  expect_nodes(
      "lab-22.05/sinfo-unhealthy.txt",
      {{"alpha-n1", "mixed$", "mixed+maintenance+reserved", false, 8, 16, "", kBoth},
       {"alpha-n2", "draining", "allocated+drain", false, 8, 16, "draining for maintenance", kBoth},
       {"alpha-n3", "down", "down", false, 8, 16, "hardware | check: GPU 3 fell off the bus",
        kBatch}});
}

TEST(slurm_parse_nodes, Lab2205DrainedNotRespondingAndMaint) {
  // Partitions in the order sinfo printed them (gpu first here).
  const std::vector<std::string> gpu_first = {"gpu", "batch"};
  expect_nodes("lab-22.05/sinfo-drained-not-responding.txt",
               {{"alpha-n1", "drained", "idle+drain", false, 8, 16, "bad GPU (Xid 79)", gpu_first},
                {"alpha-n2", "drained*", "down+drain+not_responding", false, 8, 16,
                 "draining for maintenance", gpu_first},
                {"alpha-n3", "maint", "idle+maintenance+reserved", false, 8, 16, "", kBatch}});
}

TEST(slurm_parse_nodes, Lab2205FailIdleNotRespondingThenDown) {
  expect_nodes("lab-22.05/sinfo-idle-not-responding.txt",
               {{"alpha-n1", "fail", "idle+fail", false, 8, 16, "failing: ECC errors", kBoth},
                {"alpha-n2", "idle*", "idle+not_responding", false, 8, 16, "", kBoth},
                {"alpha-n3", "maint", "idle+maintenance+reserved", false, 8, 16, "", kBatch}});
  expect_nodes("lab-22.05/sinfo-down-not-responding.txt",
               {{"alpha-n1", "fail", "idle+fail", false, 8, 16, "failing: ECC errors", kBoth},
                {"alpha-n2", "down*", "down+not_responding", false, 8, 16, "Not responding", kBoth},
                {"alpha-n3", "maint", "idle+maintenance+reserved", false, 8, 16, "", kBatch}});
}

TEST(slurm_parse_nodes, Docs2411EveryStateSuffixAndFlag) {
  auto nodes = parse_node_list(fixture("docs-24.x/sinfo-states-24.11.txt"));
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  std::vector<std::pair<std::string, bool>> got;
  for (const auto& n : *nodes) got.emplace_back(n.state, n.healthy);
  const std::vector<std::pair<std::string, bool>> want = {
      {"planned", true},   {"mixed-", true},    {"reboot", false},    {"mixed@", true},
      {"reboot^", false},  {"drained@", false}, {"idle~", true},      {"idle#", true},
      {"idle%", true},     {"idle!", true},     {"blocked", true},    {"inval", false},
      {"unknown*", false}, {"unknown", true},   {"allocated+", true}, {"failing", false},
      {"maint*", false},   {"reserved", true},  {"draining$", false}, {"down~", false},
      {"mixed*", false}};
  EXPECT_EQ(got, want);
  EXPECT_EQ((*nodes)[11].reason, "gres/gpu count reported lower than configured (4 < 8)");
  for (const auto& n : *nodes) EXPECT_EQ(n.gpus, 8) << n.name;
}

TEST(slurm_parse_nodes, Docs2411GresWithTypesSocketsAndOtherResources) {
  expect_nodes("docs-24.x/sinfo-gres-24.11.txt",
               {{"hgx-001", "idle", "idle", true, 8, 224, "", {"gpu", "gpu-long"}},
                {"mix-001", "mixed", "mixed", true, 6, 64, "", {"gpu"}},
                {"fake-001", "idle", "idle", true, 2, 8, "", {"debug"}},
                {"shard-001", "idle", "idle", true, 2, 64, "", {"gpu"}},
                {"bw-001", "idle", "idle", true, 4, 32, "", {"debug"}},
                {"login-001", "idle", "idle", true, 0, 16, "", {"debug"}}});
}

TEST(slurm_parse_node_health, Table) {
  struct Case {
    const char* state;
    const char* complete;
    bool healthy;
  };
  const Case cases[] = {
      {"idle", "idle", true},
      {"allocated", "allocated", true},
      {"mixed", "mixed", true},
      {"mixed-", "mixed+planned", true},
      {"down*", "down+not_responding", false},
      {"down", "down", false},
      {"drained", "idle+drain", false},
      {"draining", "allocated+drain", false},
      {"drng", "", false},  // a word this code does not know
      {"fail", "idle+fail", false},
      {"failing", "allocated+fail", false},
      {"maint", "idle+maintenance+reserved", false},
      {"idle*", "idle+not_responding", false},
      {"unknown", "unknown", true},
      {"unknown*", "unknown+not_responding", false},
      {"inval", "idle+invalid_reg", false},
      {"future", "future", false},
      {"IDLE", "IDLE+DRAIN", false},  // case does not matter
      {"idle", "", true},             // only one of the two columns
      {"", "idle+drain", false},
      {"", "mixed+cloud+some_new_flag", true},  // unknown flags are modifiers
      {"", "sleeping", false},                  // an unknown base state is not healthy
      {"", "", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(node_is_healthy(c.state, c.complete), c.healthy)
        << "'" << c.state << "' '" << c.complete << "'";
  }
}

TEST(slurm_parse_gres, GpuCounts) {
  struct Case {
    const char* gres;
    int gpus;
  };
  const Case cases[] = {
      {"gpu:8", 8},
      {"gpu:h100:8(S:0-1)", 8},
      {"gpu:a100:4,gpu:v100:2", 6},
      {"gpu:a100:4(S:0),gpu:v100:2(S:1)", 6},
      {"gpu:4(S:0,1)", 4},  // a comma inside the socket list
      {"(null)", 0},
      {"", 0},
      {"gpu", 1},
      {"gpu:h100", 1},
      {"gpu:2,shard:64", 2},
      {"mps:100", 0},
      {"bandwidth:lustre:4G,gpu:1", 1},
      {"gpu:0", 0},
  };
  for (const Case& c : cases) {
    auto n = gpus_in_gres(c.gres);
    ASSERT_TRUE(n.ok()) << c.gres << ": " << n.error().message;
    EXPECT_EQ(*n, c.gpus) << c.gres;
  }
  for (const char* bad : {"gpu:h100:eight", "gpu:8(S:0", "gpu::", "gpu:-1"}) {
    auto n = gpus_in_gres(bad);
    EXPECT_FALSE(n.ok()) << bad;
  }
}

TEST(slurm_parse_nodes, MalformedOutputIsInvalidAndQuotesTheLine) {
  struct Case {
    std::string output;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "sinfo listed no nodes"},
      {"\n\n", "sinfo listed no nodes"},
      {"alpha-n1|batch|idle|idle|16|gpu:8|none", "does not end with the field separator"},
      {"alpha-n1|batch|idle|idle|16|gpu:8|none|\nalpha-n2|batch|idle|id",
       "'alpha-n2|batch|idle|id'"},
      {"alpha-n1|batch|idle|", "expected 7"},
      {"sinfo: error: slurm_load_partitions: Unable to contact slurm controller",
       "'sinfo: error: slurm_load_partitions"},
      {"alpha-n1|batch|idle|idle|sixteen|gpu:8|none|", "CPU count"},
      {"alpha-n1|batch|idle|idle|16|gpu:x:y|none|", "GPU count"},
      {"|batch|idle|idle|16|gpu:8|none|", "node name"},
      {"alpha-n[1-2]|batch|idle|idle|16|gpu:8|none|", "node name"},
      {"alpha-n1|batch|||16|gpu:8|none|", "no state"},
      {"\x01\x02 garbage |", "\\x01\\x02"},
  };
  for (const Case& c : cases) {
    auto r = parse_node_list(c.output);
    ASSERT_FALSE(r.ok()) << c.output;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid);
    EXPECT_THAT(r.error().message, HasSubstr(c.message)) << c.output;
  }
}

TEST(slurm_parse_nodes, EveryTruncationOfACapturedOutputParsesOrIsInvalid) {
  const std::string out = fixture("lab-22.05/sinfo-unhealthy.txt");
  for (std::size_t n = 0; n <= out.size(); ++n) {
    auto r = parse_node_list(out.substr(0, n));
    if (!r.ok()) {
      EXPECT_EQ(r.error().kind, ErrorKind::invalid);
    }
  }
  // Cut at the end of a line, the nodes before the cut are all there.
  auto r = parse_node_list(out.substr(0, out.find('\n') + 1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 1u);
}

}  // namespace
}  // namespace orch::slurm
