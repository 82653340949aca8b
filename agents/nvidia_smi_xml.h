#pragma once
// GPU readings from `nvidia-smi -q -x` (the XML form of `nvidia-smi -q`), parsed by hand: the
// agent links no XML library. A pure function of the text, tested on real outputs
// (tests/fixtures/nvidia-smi/*.xml) and fuzzed (tests/fuzz/fuzz_nvidia_smi_xml.cpp).
//
// Both layouts the drivers have printed are read:
//  - ECC: `single_bit`/`double_bit` with a `total` (up to about driver 450), and the
//    `sram_*`/`dram_*` counters of Ampere and later (`sram_uncorrectable`, or on Hopper with
//    driver 550 and later `sram_uncorrectable_parity` + `sram_uncorrectable_secded`);
//  - clock reasons: `clocks_throttle_reasons`/`clocks_throttle_reason_*` (driver 535 and
//    earlier) and `clocks_event_reasons`/`clocks_event_reason_*` (later);
//  - power: `power_readings` (older) and `gpu_power_readings` (driver 530 and later).
// "N/A", "[Not Supported]" and the like leave a value unknown (nullopt), never 0.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/model/gpu_reading.h"

namespace orch::agent {

// The argument list after the program name.
std::vector<std::string> nvidia_smi_xml_arguments();

struct NvidiaSmiXml {
  std::vector<GpuReading> gpus;      // in the order printed; index = position (nvidia-smi's)
  std::optional<int> attached_gpus;  // what the driver says it has
  std::string driver_version;
  std::string error;  // not XML, or cut short ("" when the document is whole)
};

// Parses the document. Whatever GPU elements were read before a defect are kept. Bounded: at
// most 64 levels of nesting and 16 MiB of text are looked at.
NvidiaSmiXml parse_nvidia_smi_xml(std::string_view text);

}  // namespace orch::agent
