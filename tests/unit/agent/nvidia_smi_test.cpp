// nvidia-smi CSV parsing and the GPU checks, on the fixtures in tests/fixtures/nvidia-smi/.

#include "agents/nvidia_smi.h"

#include <gmock/gmock.h>

#include "tests/unit/agent/agent_test_util.h"

namespace orch::agent {
namespace {

using orch::testing::fixture;
using ::testing::HasSubstr;

const Check& find(const std::vector<Check>& checks, const std::string& name) {
  for (const Check& c : checks) {
    if (c.name == name) return c;
  }
  static Check none{"missing", false, ""};
  ADD_FAILURE() << "no check " << name;
  return none;
}

TEST(NvidiaSmi, AsksForTheDocumentedFields) {
  auto args = nvidia_smi_arguments();
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[0],
            "--query-gpu=index,name,uuid,temperature.gpu,clocks.sm,clocks.max.sm,"
            "ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.volatile.total,"
            "retired_pages.double_bit.count,retired_pages.pending");
  EXPECT_EQ(args[1], "--format=csv,noheader,nounits");
}

TEST(NvidiaSmi, ParsesHealthyH100s) {
  NvidiaSmiParse p = parse_nvidia_smi_csv(fixture("h100_healthy.csv"));
  EXPECT_TRUE(p.bad_lines.empty());
  ASSERT_EQ(p.gpus.size(), 2u);
  const GpuReading& g = p.gpus[1];
  EXPECT_EQ(g.index, 1);
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.uuid, "GPU-bc5610b9-79c8-fedd-8899-07539c7f868a");
  EXPECT_EQ(g.temperature_c, 36);
  EXPECT_EQ(g.sm_clock_mhz, 1980);
  EXPECT_EQ(g.max_sm_clock_mhz, 1980);
  EXPECT_EQ(g.ecc_uncorrected, 0);
  EXPECT_EQ(g.ecc_corrected, 2);
  EXPECT_FALSE(g.retired_pages_dbe.has_value());  // row remapping: [N/A]
  EXPECT_FALSE(g.retired_pages_pending.has_value());

  auto checks = gpu_checks(p.gpus, 85);
  ASSERT_EQ(checks.size(), 3u);
  for (const Check& c : checks) EXPECT_TRUE(c.ok) << c.name << ": " << c.detail;
  EXPECT_THAT(find(checks, "gpu-ecc").detail, HasSubstr("2 corrected"));
  EXPECT_THAT(find(checks, "gpu-retired-pages").detail, HasSubstr("[N/A]"));
  EXPECT_THAT(find(checks, "gpu-temperature").detail, HasSubstr("hottest GPU 36 C"));
}

TEST(NvidiaSmi, UncorrectedEccFailsNamingTheGpu) {
  NvidiaSmiParse p = parse_nvidia_smi_csv(fixture("a100_ecc_errors.csv"));
  ASSERT_EQ(p.gpus.size(), 2u);
  EXPECT_EQ(p.gpus[1].ecc_uncorrected, 3);
  EXPECT_EQ(p.gpus[1].ecc_corrected, 118);
  auto checks = gpu_checks(p.gpus, 85);
  const Check& ecc = find(checks, "gpu-ecc");
  EXPECT_FALSE(ecc.ok);
  EXPECT_THAT(ecc.detail, HasSubstr("GPU 1 (GPU-e9c9aa65-bff3-405a-ab7c-dc879cc88169): 3"));
  EXPECT_TRUE(find(checks, "gpu-temperature").ok);
}

TEST(NvidiaSmi, PendingRetirementAndHeatFail) {
  NvidiaSmiParse p = parse_nvidia_smi_csv(fixture("v100_hot_pending_retirement.csv"));
  ASSERT_EQ(p.gpus.size(), 1u);
  EXPECT_EQ(p.gpus[0].retired_pages_dbe, 2);
  EXPECT_EQ(p.gpus[0].retired_pages_pending, true);
  auto checks = gpu_checks(p.gpus, 85);
  EXPECT_TRUE(find(checks, "gpu-ecc").ok);
  EXPECT_FALSE(find(checks, "gpu-retired-pages").ok);
  const Check& temp = find(checks, "gpu-temperature");
  EXPECT_FALSE(temp.ok);
  EXPECT_THAT(temp.detail, HasSubstr("91 C > 85 C"));
  EXPECT_TRUE(find(gpu_checks(p.gpus, 95), "gpu-temperature").ok);
}

TEST(NvidiaSmi, UnavailableValuesAreUnknownNotZero) {
  NvidiaSmiParse p = parse_nvidia_smi_csv(fixture("not_supported.csv"));
  EXPECT_TRUE(p.bad_lines.empty());
  ASSERT_EQ(p.gpus.size(), 2u);
  EXPECT_FALSE(p.gpus[0].ecc_uncorrected.has_value());
  EXPECT_FALSE(p.gpus[0].ecc_corrected.has_value());
  EXPECT_EQ(p.gpus[0].sm_clock_mhz, 210);
  EXPECT_FALSE(p.gpus[1].temperature_c.has_value());  // [Not Supported]
  EXPECT_FALSE(p.gpus[1].sm_clock_mhz.has_value());   // [Unknown Error]
  EXPECT_EQ(p.gpus[1].retired_pages_pending, false);
  auto checks = gpu_checks(p.gpus, 85);
  for (const Check& c : checks) EXPECT_TRUE(c.ok) << c.name;
}

TEST(NvidiaSmi, ALostGpuIsABadLineAndTheOthersStillCount) {
  NvidiaSmiParse p = parse_nvidia_smi_csv(fixture("lost_gpu.txt"));
  ASSERT_EQ(p.gpus.size(), 1u);
  ASSERT_EQ(p.bad_lines.size(), 1u);
  EXPECT_THAT(p.bad_lines[0], HasSubstr("Unable to determine the device handle for GPU1"));
}

TEST(NvidiaSmi, ToleratesBlankLinesCarriageReturnsAndBareNA) {
  NvidiaSmiParse p = parse_nvidia_smi_csv(
      "\n0, GeForce RTX 2080, GPU-22b2c6ac, 45, N/A, 1965, N/A, N/A, N/A, N/A\r\n\n");
  EXPECT_TRUE(p.bad_lines.empty());
  ASSERT_EQ(p.gpus.size(), 1u);
  EXPECT_FALSE(p.gpus[0].sm_clock_mhz.has_value());
  EXPECT_EQ(p.gpus[0].max_sm_clock_mhz, 1965);
  EXPECT_TRUE(parse_nvidia_smi_csv("").gpus.empty());
  EXPECT_EQ(parse_nvidia_smi_csv("x, a, b\n").bad_lines.size(), 1u);
  EXPECT_EQ(parse_nvidia_smi_csv("-1, a, b, 1, 1, 1, 0, 0, 0, No\n").bad_lines.size(), 1u);
}

TEST(NvidiaSmi, NoGpuReportingCountersPassesAndSaysSo) {
  auto checks = gpu_checks({}, 85);
  ASSERT_EQ(checks.size(), 3u);
  for (const Check& c : checks) EXPECT_TRUE(c.ok);
  EXPECT_THAT(find(checks, "gpu-ecc").detail, HasSubstr("no GPU reports"));
}

}  // namespace
}  // namespace orch::agent
