// The live watch's judgement (agents/gpu_watch.h) on text: Xid lines of the forms the driver
// prints, PCI ids as the kernel and nvidia-smi spell them, nvidia-smi's watch query, and which
// line or sample is the fault.
#include "agents/gpu_watch.h"

#include <gmock/gmock.h>

#include <nlohmann/json.hpp>

namespace orch::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// https://github.com/NVIDIA/NVSentinel/issues/155 and the driver's older form (no PCI: prefix).
constexpr const char* kXid79 =
    "[ 1234.5678] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has "
    "fallen off the bus.";
constexpr const char* kXid94 =
    "NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, Contained ECC error";
constexpr const char* kXid13 = "NVRM: Xid (0000:01:00): 13, Graphics SM Warp Exception";

// index, pci.bus_id, ecc.errors.uncorrected.volatile.total, temperature.gpu, power.draw,
// clocks_throttle_reasons.active
constexpr const char* kSample =
    "0, 00000000:18:00.0, 0, 41, 310.25, 0x0000000000000000\n"
    "3, 00000000:3B:00.0, 0, 67, 402.10, 0x0000000000000040\n";

TEST(GpuWatch, XidLinesGiveTheirCodePciIdAndDescriptionWithoutPidAndName) {
  auto e = parse_xid_event(kXid79);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, 79);
  EXPECT_EQ(e->pci, "0000:3b:00");
  EXPECT_EQ(e->description, "GPU has fallen off the bus");
  auto old = parse_xid_event(kXid13);
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->pci, "0000:01:00");
  EXPECT_EQ(old->description, "Graphics SM Warp Exception");
  EXPECT_FALSE(parse_xid_event("usb 1-1: new high-speed USB device").has_value());
}

TEST(GpuWatch, PciIdsOfTheKernelAndOfNvidiaSmiMeetInOneForm) {
  EXPECT_EQ(normalize_pci("PCI:0000:3b:00"), "0000:3b:00");
  EXPECT_EQ(normalize_pci("00000000:3B:00.0"), "0000:3b:00");
  EXPECT_EQ(normalize_pci("3b:00"), "");
  EXPECT_EQ(normalize_pci("zz:3b:00"), "");
}

TEST(GpuWatch, ASampleReadsEveryGpuAndSkipsLinesThatAreNoReading) {
  auto gpus = parse_watch_sample(std::string(kSample) +
                                 "Unable to determine the device handle for GPU1: Unknown Error\n"
                                 "4, 00000000:5D:00.0, [N/A], [N/A], [N/A], [N/A]\n");
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[1].index, 3);
  EXPECT_EQ(gpus[1].pci, "0000:3b:00");
  EXPECT_EQ(gpus[1].temperature_c, 67);
  EXPECT_EQ(gpus[1].throttle_mask, 0x40u);
  EXPECT_FALSE(gpus[2].ecc_uncorrected.has_value());
  EXPECT_FALSE(gpus[2].temperature_c.has_value());
  EXPECT_THAT(throttle_names(0x40 | 0x4 | 0x1), ElementsAre("sw_power_cap", "hw_thermal"));
}

TEST(GpuWatch, AFatalXidIsTheFaultNamingTheGpuItsPciIdMapsTo) {
  GpuWatch w;
  ASSERT_FALSE(w.on_sample(parse_watch_sample(kSample), 1000).has_value());
  EXPECT_FALSE(w.on_kernel_line(kXid13, 1500).has_value()) << "13 may be the job's own";
  auto f = w.on_kernel_line(kXid79, 2000);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->cause, "gpu_xid");
  EXPECT_EQ(f->gpu, 3);
  EXPECT_EQ(f->xid, 79);
  EXPECT_EQ(f->at_ms, 2000);
  EXPECT_EQ(f->detail, "Xid 79 on GPU 3 (PCI 0000:3b:00): GPU has fallen off the bus");
  // Only the first fault is the attempt's.
  EXPECT_FALSE(w.on_kernel_line(kXid94, 2100).has_value());
  EXPECT_EQ(w.fault()->xid, 79);
}

TEST(GpuWatch, AnXidBeforeAnySampleNamesThePciIdAlone) {
  GpuWatch w;
  auto f = w.on_kernel_line(kXid94, 10);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->gpu.has_value());
  EXPECT_EQ(f->detail, "Xid 94 on PCI 0000:9b:00: Contained ECC error");
}

TEST(GpuWatch, AnEccCountThatRisesIsAFaultButOneThereFromTheStartIsNot) {
  GpuWatch w;
  EXPECT_FALSE(w.on_sample(parse_watch_sample("2, 00000000:3B:00.0, 5, 40, 100, 0x0\n"), 1)
                   .has_value());
  EXPECT_FALSE(w.on_sample(parse_watch_sample("2, 00000000:3B:00.0, 5, 40, 100, 0x0\n"), 2)
                   .has_value());
  auto f = w.on_sample(parse_watch_sample("2, 00000000:3B:00.0, 7, 40, 100, 0x0\n"), 3);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->cause, "gpu_ecc");
  EXPECT_EQ(f->gpu, 2);
  EXPECT_EQ(f->ecc_uncorrected, 7);
  EXPECT_EQ(f->detail, "uncorrectable ECC errors on GPU 2 (PCI 0000:3b:00) rose from 5 to 7");
}

TEST(GpuWatch, TheReadingsAreOneJsonObjectForHeartbeats) {
  GpuWatch w;
  EXPECT_THAT(w.watch_json(), IsEmpty());
  (void)w.on_sample(parse_watch_sample(kSample), 1);
  auto j = nlohmann::json::parse(w.watch_json());
  EXPECT_EQ(j["temp_max_c"], 67);
  EXPECT_DOUBLE_EQ(j["power_w"].get<double>(), 712.4);  // the node's GPUs together
  EXPECT_EQ(j["ecc_uncorrected"], 0);
  EXPECT_EQ(j["throttle"], nlohmann::json::array({"hw_thermal"}));
  w.on_sample_error("nvidia-smi gave no answer within its deadline");
  EXPECT_EQ(nlohmann::json::parse(w.watch_json())["error"],
            "nvidia-smi gave no answer within its deadline");
}

TEST(GpuWatch, TheFaultsMembersAreTheRecordsKeys) {
  GpuFault f{"gpu_xid", 3, "0000:3b:00", 79, std::nullopt, "Xid 79 on GPU 3", 1700};
  auto j = nlohmann::json::parse("{" + fault_members(f, "alpha-n2", 5) + "}");
  EXPECT_EQ(j, nlohmann::json::parse(R"({"cause":"gpu_xid","gpu":3,"pci":"0000:3b:00","xid":79,
      "detail":"Xid 79 on GPU 3","node":"alpha-n2","task_rank":5,"at_ms":1700})"));
}

}  // namespace
}  // namespace orch::agent
