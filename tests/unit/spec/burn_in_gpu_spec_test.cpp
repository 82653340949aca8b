// A cluster's burn_in.gpu map (issue 43): what it reads, its defaults, and how each mistake in
// it is reported (file:line:col and why).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/spec/clusters_parser.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

ClusterSpec parse_one(const std::string& yaml) {
  auto r = parse_clusters_file(yaml, "clusters.yaml");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r->clusters.at(0) : ClusterSpec{};
}

TEST(BurnInGpuSpec, WithoutTheSectionNoGpuPartIsAskedFor) {
  ClusterSpec c = parse_one("clusters:\n  - name: a\n    burn_in: {on_join: true}\n");
  EXPECT_FALSE(c.burn_in.gpu.configured);
  EXPECT_EQ(c.burn_in.gpu.dcgm_level, 0);
  EXPECT_EQ(c.burn_in.gpu.dcgmi, "dcgmi");
  EXPECT_EQ(c.burn_in.gpu.min_tflops_ratio, 0.8);
  EXPECT_EQ(c.burn_in.gpu.min_datasheet_ratio, 0.5);
}

TEST(BurnInGpuSpec, ReadsEveryKey) {
  ClusterSpec c = parse_one(
      "clusters:\n  - name: a\n    gpus_per_node: 8\n    burn_in:\n      on_join: true\n"
      "      gpu:\n        nvidia_smi: /usr/bin/nvidia-smi\n        dcgm_level: 3\n"
      "        dcgmi: /usr/bin/dcgmi\n        torch_python: /opt/venv/bin/python3\n"
      "        torch_s: 45\n        min_tflops_ratio: 0.7\n        min_datasheet_ratio: 0.4\n");
  const GpuBurnInSpec& g = c.burn_in.gpu;
  EXPECT_TRUE(g.configured);
  EXPECT_EQ(g.nvidia_smi, "/usr/bin/nvidia-smi");
  EXPECT_EQ(g.dcgm_level, 3);
  EXPECT_EQ(g.dcgmi, "/usr/bin/dcgmi");
  EXPECT_EQ(g.torch_python, "/opt/venv/bin/python3");
  EXPECT_EQ(g.torch_s, 45);
  EXPECT_EQ(g.min_tflops_ratio, 0.7);
  EXPECT_EQ(g.min_datasheet_ratio, 0.4);
}

TEST(BurnInGpuSpec, AnEmptySectionStillAsksForTheGpuCount) {
  ClusterSpec c = parse_one("clusters:\n  - name: a\n    burn_in: {gpu: {}}\n");
  EXPECT_TRUE(c.burn_in.gpu.configured);
}

struct BadGpu {
  const char* why;
  const char* gpu;  // the burn_in.gpu map, flow style, on line 3 after "    burn_in: {gpu: "
  const char* where;
  const char* message;
};

const BadGpu kBad[] = {
    {"a level DCGM does not have", "{dcgm_level: 4}", "3:33",
     "\"dcgm_level\" must be an integer from 0 to 3"},
    {"a typo", "{dcgm_levle: 2}", "3:21", "unknown key \"dcgm_levle\" in burn_in.gpu"},
    {"not a map", "yes", "3:20", "burn_in.gpu must be a map"},
    {"an empty nvidia-smi path", "{nvidia_smi: ''}", "3:33", "\"nvidia_smi\" must be"},
    {"a ratio above one", "{min_tflops_ratio: 1.5}", "3:39", "\"min_tflops_ratio\" must be"},
    {"no time for torch", "{torch_python: python3, torch_s: 0}", "3:53", "\"torch_s\" must be"},
    {"dcgmi without a level", "{dcgmi: /usr/bin/dcgmi}", "3:21",
     "\"burn_in.gpu.dcgmi\" has no effect while dcgm_level is 0"},
    {"a torch budget without torch", "{torch_s: 30}", "3:21",
     "\"burn_in.gpu.torch_s\" has no effect without torch_python"},
};

class BadBurnInGpu : public ::testing::TestWithParam<BadGpu> {};

TEST_P(BadBurnInGpu, IsRejectedWithPositionAndReason) {
  const BadGpu& row = GetParam();
  std::string yaml = std::string("clusters:\n  - name: a\n    burn_in: {gpu: ") + row.gpu + "}\n";
  auto r = parse_clusters_file(yaml, "clusters.yaml");
  ASSERT_FALSE(r.ok()) << row.why << ": accepted";
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_THAT(r.error().message, StartsWith(std::string("clusters.yaml:") + row.where + ": "))
      << row.why << ": " << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr(row.message)) << row.why;
}

INSTANTIATE_TEST_SUITE_P(Table, BadBurnInGpu, ::testing::ValuesIn(kBad),
                         [](const ::testing::TestParamInfo<BadGpu>& info) {
                           std::string name = info.param.why;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace orch
