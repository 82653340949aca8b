// nvidia-smi -q -x parsing and the checks on its readings, on real outputs in
// tests/fixtures/nvidia-smi/*.xml and on the lab's stand-in (tests/lab/gpu/nvidia-smi).

#include "agents/nvidia_smi_xml.h"

#include <gmock/gmock.h>

#include "agents/gpu_checks.h"
#include "tests/unit/agent/agent_test_util.h"

namespace orch::agent {
namespace {

using orch::testing::fixture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The stand-in's XML for a node, with `faults` (lines of the faults file) planted.
std::string stand_in_xml(const std::string& node, const std::string& faults) {
  std::string dir = ::testing::TempDir() + "/smi-" + node;
  std::filesystem::create_directories(dir);
  for (const char* f : {"nvidia-smi", "faults.sh"}) {
    std::filesystem::copy_file(std::string(ORCH_SOURCE_DIR) + "/tests/lab/gpu/" + f, dir + "/" + f,
                               std::filesystem::copy_options::overwrite_existing);
  }
  std::ofstream(dir + "/faults") << faults;
  std::string out = dir + "/out.xml";
  std::string cmd =
      "ORCH_NODE_NAME=" + node + " SLURMD_NODENAME= " + dir + "/nvidia-smi -q -x >" + out;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return orch::testing::slurp(out);
}

TEST(NvidiaSmiXml, AsksForTheXmlReport) {
  EXPECT_THAT(nvidia_smi_xml_arguments(), ElementsAre("-q", "-x"));
}

TEST(NvidiaSmiXml, ReadsAnA100WithMigAndTheEventReasonsOfDriver535) {
  NvidiaSmiXml x = parse_nvidia_smi_xml(fixture("a100_sxm4_mig.xml"));
  EXPECT_EQ(x.error, "");
  EXPECT_EQ(x.driver_version, "535.54.03");
  ASSERT_EQ(x.gpus.size(), 1u);
  const GpuReading& g = x.gpus[0];
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g.uuid, "GPU-513536b6-7d19-9063-b049-1e69664bb298");
  EXPECT_EQ(g.pci_bus_id, "00000000:01:00.0");
  EXPECT_EQ(g.pcie_gen, 4);
  EXPECT_EQ(g.pcie_gen_max, 4);
  EXPECT_EQ(g.pcie_width, 16);
  EXPECT_EQ(g.pcie_width_max, 16);
  EXPECT_EQ(g.ecc_uncorrected, 0);
  EXPECT_EQ(g.ecc_corrected_aggregate, 0);
  EXPECT_EQ(g.temperature_c, 27);
  EXPECT_EQ(g.sm_clock_mhz, 1275);
  EXPECT_EQ(g.max_sm_clock_mhz, 1410);
  EXPECT_DOUBLE_EQ(*g.power_w, 67.03);
  ASSERT_TRUE(g.throttle);
  EXPECT_TRUE(g.throttle->empty());
  // remapped_rows is N/A on this driver: unknown, not "no".
  EXPECT_FALSE(g.remapped_rows_pending);
  EXPECT_FALSE(g.retired_pages_pending);
}

TEST(NvidiaSmiXml, ReadsTheThrottleReasonsAndPowerOfOlderDriversAndAnX8Link) {
  NvidiaSmiXml x = parse_nvidia_smi_xml(fixture("tesla_t4_pcie_x8.xml"));
  ASSERT_EQ(x.gpus.size(), 1u);
  const GpuReading& g = x.gpus[0];
  EXPECT_EQ(g.pcie_width, 8);
  EXPECT_EQ(g.pcie_width_max, 16);
  EXPECT_DOUBLE_EQ(*g.power_w, 26.78);
  ASSERT_TRUE(g.throttle);
  EXPECT_TRUE(g.throttle->empty());
  EXPECT_EQ(g.retired_pages_dbe, 0);
  EXPECT_EQ(g.retired_pages_pending, false);

  Check pcie = pcie_check(x.gpus);
  EXPECT_FALSE(pcie.ok);
  EXPECT_EQ(pcie.detail, "GPU 0 (00000000:00:1E.0): PCIe x8 of x16");
}

TEST(NvidiaSmiXml, ReadsTheOldEccLayoutWhereEverythingIsNotAvailable) {
  NvidiaSmiXml x = parse_nvidia_smi_xml(fixture("grid_p4_old_ecc_layout.xml"));
  EXPECT_EQ(x.error, "");
  ASSERT_EQ(x.gpus.size(), 1u);
  const GpuReading& g = x.gpus[0];
  EXPECT_EQ(g.name, "GRID P4-1Q");
  EXPECT_FALSE(g.ecc_uncorrected);
  EXPECT_FALSE(g.ecc_corrected_aggregate);
  EXPECT_FALSE(g.pcie_width);
  EXPECT_FALSE(g.throttle);  // clocks_throttle_reasons is N/A
  EXPECT_FALSE(g.power_w);
  EXPECT_EQ(pcie_check(x.gpus).detail, "no GPU reports its PCIe link");
  EXPECT_TRUE(throttle_check(x.gpus).ok);
}

TEST(NvidiaSmiXml, ReadsTheOldEccLayoutTotals) {
  std::string xml =
      "<nvidia_smi_log><gpu id=\"0\"><ecc_errors><volatile><single_bit><device_memory>4"
      "</device_memory><total>5</total></single_bit><double_bit><total>2</total></double_bit>"
      "</volatile><aggregate><single_bit><total>9</total></single_bit><double_bit><total>3"
      "</total></double_bit></aggregate></ecc_errors></gpu></nvidia_smi_log>";
  NvidiaSmiXml x = parse_nvidia_smi_xml(xml);
  ASSERT_EQ(x.gpus.size(), 1u);
  EXPECT_EQ(x.gpus[0].ecc_corrected, 5);
  EXPECT_EQ(x.gpus[0].ecc_uncorrected, 2);
  EXPECT_EQ(x.gpus[0].ecc_corrected_aggregate, 9);
  EXPECT_EQ(x.gpus[0].ecc_uncorrected_aggregate, 3);
  EXPECT_EQ(x.gpus[0].pci_bus_id, "0");  // from the id attribute when <pci> is absent
}

TEST(NvidiaSmiXml, ReadsBlackwellWithSplitSramCountersAndInstantPower) {
  NvidiaSmiXml x = parse_nvidia_smi_xml(fixture("rtx_pro_6000_blackwell.xml"));
  ASSERT_EQ(x.gpus.size(), 1u);
  const GpuReading& g = x.gpus[0];
  EXPECT_FALSE(g.ecc_uncorrected);  // ECC disabled: every counter N/A
  EXPECT_EQ(g.remapped_rows_pending, false);
  EXPECT_EQ(g.remapped_rows_failure, false);
  EXPECT_EQ(g.remapped_rows_uncorrectable, 0);
  EXPECT_DOUBLE_EQ(*g.power_w, 3.99);
  EXPECT_EQ(g.pcie_gen, 1);
  EXPECT_EQ(g.pcie_gen_max, 4);
  // An idle GPU at gen 1 of 4 is healthy: named, not failed.
  Check pcie = pcie_check(x.gpus);
  EXPECT_TRUE(pcie.ok) << pcie.detail;
  EXPECT_THAT(pcie.detail, HasSubstr("gen 1 of 4"));
  EXPECT_TRUE(remapped_rows_check(x.gpus).ok);
}

TEST(NvidiaSmiXml, TheStandInsHealthyH100NodeReadsAsEightHealthyGpus) {
  NvidiaSmiXml x = parse_nvidia_smi_xml(stand_in_xml("good", ""));
  EXPECT_EQ(x.error, "");
  EXPECT_EQ(x.attached_gpus, 8);
  ASSERT_EQ(x.gpus.size(), 8u);
  for (const GpuReading& g : x.gpus) {
    EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(g.pcie_gen, 5);
    EXPECT_EQ(g.pcie_width, 16);
    EXPECT_EQ(g.ecc_uncorrected, 0);  // sram parity + secded + dram
    EXPECT_EQ(g.remapped_rows_pending, false);
  }
  EXPECT_EQ(x.gpus[3].pci_bus_id, "00000000:5D:00.0");
  for (const Check& c : {gpu_count_check(8, 8), pcie_check(x.gpus), remapped_rows_check(x.gpus),
                         throttle_check(x.gpus)}) {
    EXPECT_TRUE(c.ok) << c.name << ": " << c.detail;
  }
}

TEST(NvidiaSmiXml, PlantedFaultsFailTheirChecksWithTheReading) {
  NvidiaSmiXml missing = parse_nvidia_smi_xml(stand_in_xml("m", "m gpus_missing 1\n"));
  Check count = gpu_count_check(static_cast<int>(missing.gpus.size()), 8);
  EXPECT_FALSE(count.ok);
  EXPECT_EQ(count.detail, "7 GPUs of 8 expected");

  NvidiaSmiXml narrow = parse_nvidia_smi_xml(stand_in_xml("w", "w pcie_width 8\n"));
  EXPECT_EQ(pcie_check(narrow.gpus).detail, "GPU 0 (00000000:18:00.0): PCIe x8 of x16");

  NvidiaSmiXml ecc = parse_nvidia_smi_xml(stand_in_xml("e", "e ecc_uncorrected 3\n"));
  EXPECT_EQ(ecc.gpus[0].ecc_uncorrected, 3);
  EXPECT_EQ(ecc.gpus[0].ecc_uncorrected_aggregate, 3);

  NvidiaSmiXml remap = parse_nvidia_smi_xml(stand_in_xml("r", "r remap_pending yes\n"));
  Check rows = remapped_rows_check(remap.gpus);
  EXPECT_FALSE(rows.ok);
  EXPECT_THAT(rows.detail, HasSubstr("GPU 0 (00000000:18:00.0): a row remap is pending"));

  NvidiaSmiXml hot = parse_nvidia_smi_xml(stand_in_xml("t", "t throttle hw_thermal\n"));
  Check throttle = throttle_check(hot.gpus);
  EXPECT_FALSE(throttle.ok);
  EXPECT_EQ(throttle.detail, "GPU 0 (00000000:18:00.0): clocks held down by hw_thermal");

  NvidiaSmiXml capped = parse_nvidia_smi_xml(stand_in_xml("c", "c throttle sw_power_cap\n"));
  EXPECT_TRUE(throttle_check(capped.gpus).ok);
  EXPECT_THAT(throttle_check(capped.gpus).detail, HasSubstr("sw_power_cap"));
}

TEST(NvidiaSmiXml, ATruncatedReportKeepsTheGpusReadSoFarAndSaysSo) {
  std::string whole = fixture("a100_sxm4_mig.xml");
  NvidiaSmiXml x = parse_nvidia_smi_xml(whole.substr(0, whole.find("<temperature>")));
  EXPECT_THAT(x.error, HasSubstr("cut short"));
  ASSERT_EQ(x.gpus.size(), 1u);
  EXPECT_EQ(x.gpus[0].pcie_width, 16);
}

TEST(NvidiaSmiXml, TextThatIsNotTheReportIsAnErrorNotAGpu) {
  for (const char* text : {"", "Unable to determine the device handle for GPU1: Unknown Error",
                           "<html><body>no</body></html>", "<<<>>>", "<a><b></a>"}) {
    NvidiaSmiXml x = parse_nvidia_smi_xml(text);
    EXPECT_TRUE(x.gpus.empty()) << text;
    EXPECT_NE(x.error, "") << text;
  }
}

TEST(NvidiaSmiXml, DeepNestingAndDeclarationsAreBounded) {
  std::string deep = "<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><nvidia_smi_log>";
  for (int i = 0; i < 200; ++i) deep += "<a>";
  NvidiaSmiXml x = parse_nvidia_smi_xml(deep);
  EXPECT_THAT(x.error, HasSubstr("deeper than 64"));
  NvidiaSmiXml entity = parse_nvidia_smi_xml(
      "<!DOCTYPE x [<!ENTITY e \"boom\">]><nvidia_smi_log><gpu><product_name>A &amp; &e;"
      "</product_name></gpu></nvidia_smi_log>");
  ASSERT_EQ(entity.gpus.size(), 1u);
  EXPECT_EQ(entity.gpus[0].name, "A & &e;");  // entities are never expanded
}

TEST(GpuChecks, CountPassesAtOrAboveWhatIsExpected) {
  EXPECT_TRUE(gpu_count_check(8, 8).ok);
  EXPECT_EQ(gpu_count_check(8, 8).detail, "8 GPUs of 8 expected");
  EXPECT_FALSE(gpu_count_check(0, 4).ok);
  EXPECT_EQ(gpu_count_check(1, 2).detail, "1 GPU of 2 expected");
}

TEST(GpuChecks, RowRemapFailureFailsAndSaysTheGpuNeedsService) {
  GpuReading g;
  g.index = 2;
  g.remapped_rows_pending = false;
  g.remapped_rows_failure = true;
  Check c = remapped_rows_check({g});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.detail, "GPU 2: row remapping failed (the GPU needs service)");
}

TEST(GpuChecks, ReadsTheNvlinkStatusOfAnH100PcieWhoseUnbridgedLinksAreInactive) {
  std::vector<NvlinkState> links = parse_nvlink_status(fixture("nvlink_h100_pcie.txt"));
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].index, 0);
  EXPECT_EQ(links[0].up, 7);
  EXPECT_THAT(links[0].down, ElementsAre(4, 5));
  // Links down alike on every GPU are the board's wiring, not a fault.
  EXPECT_TRUE(nvlink_check(links).ok);
  EXPECT_TRUE(parse_nvlink_status("NVLink is not supported\n").empty());
}

TEST(GpuChecks, AGpuWithFewerNvlinksUpThanItsPeersFailsNamingTheLinks) {
  std::string dir = ::testing::TempDir() + "/nvlink-stand-in";
  std::filesystem::create_directories(dir);
  for (const char* f : {"nvidia-smi", "faults.sh"}) {
    std::filesystem::copy_file(std::string(ORCH_SOURCE_DIR) + "/tests/lab/gpu/" + f, dir + "/" + f,
                               std::filesystem::copy_options::overwrite_existing);
  }
  std::ofstream(dir + "/faults") << "nv nvlink_down 2\n";
  std::string cmd = "SLURMD_NODENAME=nv " + dir + "/nvidia-smi nvlink -s >" + dir + "/out";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::vector<NvlinkState> links = parse_nvlink_status(orch::testing::slurp(dir + "/out"));
  ASSERT_EQ(links.size(), 8u);
  Check c = nvlink_check(links);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.detail, "GPU 0: 16 of 18 NVLinks up (down: 16, 17)");
}

}  // namespace
}  // namespace orch::agent
