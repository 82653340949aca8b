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
                          "NodeList:|,PartitionName:|,StateLong:|,StateComplete:|,CPUs:|,"
                          "CPUsState:|,Memory:|,Gres:|,GresUsed:|,Reason:|"));
}

// What every tenant's jobs hold on each node: GresUsed's GPUs, or all of them when no CPU is
// idle (sinfo-tenant: alpha-n1 under another tenant's --exclusive job without --gres).
struct Busy {
  std::string name;
  int cpus_idle;
  int gpus_used;
  int gpus_busy;
};

void expect_busy(const std::string& file, const std::vector<Busy>& want) {
  SCOPED_TRACE(file);
  auto nodes = parse_node_list(fixture(file));
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ((*nodes)[i].name, want[i].name);
    EXPECT_EQ((*nodes)[i].cpus_idle, want[i].cpus_idle);
    EXPECT_EQ((*nodes)[i].gpus_used, want[i].gpus_used);
    EXPECT_EQ((*nodes)[i].gpus_busy, want[i].gpus_busy);
  }
}

TEST(slurm_parse_nodes, Lab2205GpusOtherTenantsHold) {
  expect_busy("lab-22.05/sinfo-idle.txt",
              {{"alpha-n1", 16, 0, 0}, {"alpha-n2", 16, 0, 0}, {"alpha-n3", 16, 0, 0}});
  expect_busy("lab-22.05/sinfo-busy.txt",
              {{"alpha-n1", 15, 4, 4}, {"alpha-n2", 15, 4, 4}, {"alpha-n3", 15, 2, 2}});
  expect_busy("lab-22.05/sinfo-tenant.txt",
              {{"alpha-n1", 0, 8, 8}, {"alpha-n2", 14, 5, 5}, {"alpha-n3", 16, 0, 0}});
  // Draining with every CPU "other" (2/0/14/16): no job can start there, all 8 count as busy.
  expect_busy("lab-22.05/sinfo-unhealthy.txt",
              {{"alpha-n1", 15, 2, 2}, {"alpha-n2", 0, 5, 8}, {"alpha-n3", 0, 0, 8}});
}

// Each node's CPUs and memory (issue 40): placement checks a job's cpus_per_task and memory.
TEST(slurm_parse_nodes, EachNodesCpusAndMemory) {
  auto lab = parse_node_list(fixture("lab-22.05/sinfo-idle.txt"));
  ASSERT_TRUE(lab.ok()) << lab.error().message;
  for (const NodeRecord& n : *lab) {
    EXPECT_EQ(n.cpus, 16) << n.name;
    EXPECT_EQ(n.memory_mb, 64000) << n.name;
  }
  auto docs = parse_node_list(fixture("docs-24.x/sinfo-gres-24.11.txt"));
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  EXPECT_EQ((*docs)[0].name, "hgx-001");
  EXPECT_EQ((*docs)[0].cpus, 224);
  EXPECT_EQ((*docs)[0].memory_mb, 1792000);
}

TEST(slurm_parse_nodes, Lab2205NodesInAReservationAreHealthyAndIdle) {
  // Slurm shows nodes reserved for someone as "reserved": sinfo says nothing of whose, so
  // placement may choose them and the queue-aware failover moves a job Slurm keeps waiting.
  const std::vector<std::string> both = {"batch", "gpu"};
  expect_nodes("lab-22.05/sinfo-reserved.txt",
               {{"alpha-n1", "reserved", "idle+reserved", true, 8, 16, "", both},
                {"alpha-n2", "reserved", "idle+reserved", true, 8, 16, "", both},
                {"alpha-n3", "idle", "idle", true, 8, 16, "", {"batch"}}});
  expect_nodes("lab-22.05/sinfo-reserved-planned.txt",
               {{"alpha-n1", "reserved", "idle+reserved+planned", true, 8, 16, "", both},
                {"alpha-n2", "reserved", "idle+reserved", true, 8, 16, "", both},
                {"alpha-n3", "idle", "idle", true, 8, 16, "", {"batch"}}});
}

TEST(slurm_parse_nodes, Docs2411GresUsedWithTypesAndIndexes) {
  expect_busy("docs-24.x/sinfo-gres-24.11.txt", {{"hgx-001", 224, 0, 0},
                                                 {"mix-001", 32, 3, 3},
                                                 {"fake-001", 8, 0, 0},
                                                 {"shard-001", 64, 0, 0},
                                                 {"bw-001", 32, 0, 0},
                                                 {"login-001", 16, 0, 0}});
}

TEST(slurm_parse_nodes, Lab2205IdleNodesInTwoPartitionsAreMerged) {
  expect_nodes("lab-22.05/sinfo-idle.txt", {{"alpha-n1", "idle", "idle", true, 8, 16, "", kBoth},
                                            {"alpha-n2", "idle", "idle", true, 8, 16, "", kBoth},
                                            {"alpha-n3", "idle", "idle", true, 8, 16, "", kBatch}});
  // sinfo does not keep one partition order from node to node.
  expect_nodes("lab-22.05/sinfo-busy.txt",
               {{"alpha-n1", "mixed", "mixed", true, 8, 16, "", kBoth},
                {"alpha-n2", "mixed", "mixed", true, 8, 16, "", {"gpu", "batch"}},
                {"alpha-n3", "mixed", "mixed", true, 8, 16, "", kBatch}});
}

TEST(slurm_parse_nodes, Lab2205MaintenanceDrainingAndDownWithAReasonHoldingAPipe) {
  expect_nodes("lab-22.05/sinfo-unhealthy.txt",
               {{"alpha-n1", "mixed$", "mixed+maintenance+reserved", false, 8, 16, "", kBoth},
                {"alpha-n2",
                 "draining",
                 "allocated+drain",
                 false,
                 8,
                 16,
                 "draining for maintenance",
                 {"gpu", "batch"}},
                {"alpha-n3", "down", "down", false, 8, 16,
                 "hardware | check: GPU 3 fell off the bus", kBatch}});
}

TEST(slurm_parse_nodes, Lab2205DrainedNotRespondingAndMaint) {
  expect_nodes("lab-22.05/sinfo-drained-not-responding.txt",
               {{"alpha-n1", "drained", "idle+drain", false, 8, 16, "bad GPU (Xid 79)", kBoth},
                {"alpha-n2", "drained*", "down+drain+not_responding", false, 8, 16,
                 "draining for maintenance", kBoth},
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
      {"gpu:5(IDX:0-4)", 5},  // GresUsed
      {"gpu:h100:2(IDX:0,3)", 2},
      {"gpu:(null):3(IDX:0-2)", 3},
      {"gpu:(null):0(IDX:N/A)", 0},
      {"gpu:a100:2(IDX:0-1),gpu:v100:1(IDX:0)", 3},
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
      {"alpha-n1|batch|idle|idle|16|0/16/0/16|64000|gpu:8|gpu:0|none",
       "does not end with the field separator"},
      {"alpha-n1|batch|idle|idle|16|0/16/0/16|64000|gpu:8|gpu:0|none|\nalpha-n2|batch|idle|id",
       "'alpha-n2|batch|idle|id'"},
      {"alpha-n1|batch|idle|", "expected 10"},
      {"alpha-n1|batch|idle|idle|16|0/16/0/16|gpu:8|gpu:0|none|", "expected 10"},  // no Memory
      {"alpha-n1|batch|idle|idle|16|0/16/0/16|64G|gpu:8|gpu:0|none|", "memory size"},
      {"alpha-n1|batch|idle|idle|16|gpu:8|none|", "expected 10"},  // the old 7 fields
      {"sinfo: error: slurm_load_partitions: Unable to contact slurm controller",
       "'sinfo: error: slurm_load_partitions"},
      {"alpha-n1|batch|idle|idle|sixteen|0/16/0/16|64000|gpu:8|gpu:0|none|", "CPU count"},
      {"alpha-n1|batch|idle|idle|16|0/16/0|64000|gpu:8|gpu:0|none|", "CPU state"},
      {"alpha-n1|batch|idle|idle|16|0/x/0/16|64000|gpu:8|gpu:0|none|", "CPU state"},
      {"alpha-n1|batch|idle|idle|16|0/16/0/16|64000|gpu:x:y|gpu:0|none|", "GPU count"},
      {"alpha-n1|batch|idle|idle|16|0/16/0/16|64000|gpu:8|gpu:h100:x|none|", "GPUs in use"},
      {"|batch|idle|idle|16|0/16/0/16|64000|gpu:8|gpu:0|none|", "node name"},
      {"alpha-n[1-2]|batch|idle|idle|16|0/16/0/16|64000|gpu:8|gpu:0|none|", "node name"},
      {"alpha-n1|batch|||16|0/16/0/16|64000|gpu:8|gpu:0|none|", "no state"},
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
