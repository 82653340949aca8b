// A cluster's burn_in.fabric map (issue 43): what it reads, its defaults, and how each mistake in
// it is reported (file:line:col and why).
#include <gmock/gmock.h>

#include "scheduler/spec/clusters_parser.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(BurnInFabricSpec, WithoutTheSectionThereIsNoFabricStep) {
  auto r = parse_clusters_file("clusters:\n  - name: a\n    burn_in: {on_join: true}\n",
                               "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const FabricSpec& f = r->clusters.at(0).burn_in.fabric;
  EXPECT_FALSE(f.enabled());
  EXPECT_EQ(f.rounds, 0);
  EXPECT_EQ(f.min_busbw_ratio, 0.6);
  EXPECT_EQ(f.bytes, 1LL << 30);
  EXPECT_EQ(f.timeout_s, 120);
}

TEST(BurnInFabricSpec, ReadsEveryKey) {
  auto r = parse_clusters_file(
      "clusters:\n  - name: a\n    burn_in:\n      fabric:\n"
      "        all_reduce_perf: /opt/nccl-tests/build/all_reduce_perf\n        rounds: 4\n"
      "        min_busbw_ratio: 0.7\n        bytes: 268435456\n        timeout_s: 90\n"
      "        gpus_per_node: 4\n",
      "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const FabricSpec& f = r->clusters.at(0).burn_in.fabric;
  EXPECT_TRUE(f.enabled());
  EXPECT_EQ(f.all_reduce_perf, "/opt/nccl-tests/build/all_reduce_perf");
  EXPECT_EQ(f.rounds, 4);
  EXPECT_EQ(f.min_busbw_ratio, 0.7);
  EXPECT_EQ(f.bytes, 268435456);
  EXPECT_EQ(f.timeout_s, 90);
  EXPECT_EQ(f.gpus_per_node, 4);
}

struct BadFabric {
  const char* why;
  const char* fabric;  // flow style, on line 3 after "    burn_in: {fabric: "
  const char* message;
};

const BadFabric kBad[] = {
    {"a relative path", "{all_reduce_perf: all_reduce_perf}",
     "\"all_reduce_perf\" must be an absolute path on the nodes"},
    {"a typo", "{round: 3}", "unknown key \"round\" in burn_in.fabric"},
    {"a ratio above one", "{min_busbw_ratio: 2}", "\"min_busbw_ratio\" must be"},
    {"half a byte", "{bytes: 1.5}", "\"bytes\" must be a whole number of bytes"},
    {"no time", "{timeout_s: 0}", "\"timeout_s\" must be"},
    {"negative rounds", "{rounds: -1}", "\"rounds\" must be"},
};

TEST(BurnInFabricSpec, EachMistakeSaysWhereAndWhy) {
  for (const auto& row : kBad) {
    auto r = parse_clusters_file(
        std::string("clusters:\n  - name: a\n    burn_in: {fabric: ") + row.fabric + "}\n",
        "clusters.yaml");
    ASSERT_FALSE(r.ok()) << row.why;
    EXPECT_THAT(r.error().message, HasSubstr(row.message)) << row.why;
    EXPECT_THAT(r.error().message, StartsWith("clusters.yaml:3:")) << row.why;
  }
}

}  // namespace
}  // namespace orch
