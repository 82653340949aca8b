#pragma once
// GPU readings from nvidia-smi's CSV query and the checks the probe makes on them. Parsing is a
// pure function of the text, tested on captured output (tests/fixtures/nvidia-smi/).

#include <string>
#include <string_view>
#include <vector>

#include "agents/probe_check.h"
#include "scheduler/model/gpu_reading.h"

namespace orch::agent {

// The fields asked for, in the order the parser expects them. Names as in
// `nvidia-smi --help-query-gpu` (note retired_pages.double_bit.count has no "_ecc"). On GPUs
// that replaced page retirement with row remapping (A100 and later) the two retired_pages
// fields print [N/A].
inline constexpr const char* kNvidiaSmiQueryFields =
    "index,name,uuid,temperature.gpu,clocks.sm,clocks.max.sm,"
    "ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.volatile.total,"
    "retired_pages.double_bit.count,retired_pages.pending";

// The argument list after the program name.
std::vector<std::string> nvidia_smi_arguments();

using orch::GpuReading;  // scheduler/model/gpu_reading.h, shared with the probe line's reader

struct NvidiaSmiParse {
  std::vector<GpuReading> gpus;
  std::vector<std::string> bad_lines;  // lines that are not a GPU reading, as printed
};

// Parses `--format=csv,noheader,nounits` output for kNvidiaSmiQueryFields: one GPU a line.
// Blank lines are skipped. Values nvidia-smi cannot give ("[N/A]", "N/A", "[Not Supported]",
// "[Unknown Error]", ...) become nullopt. A line with the wrong number of fields or no integer
// index is not a reading (nvidia-smi prints "Unable to determine the device handle for GPU..."
// among the rows when one GPU is lost): it goes to bad_lines and the other GPUs still count.
NvidiaSmiParse parse_nvidia_smi_csv(std::string_view text);

// "gpu-ecc" (any uncorrected volatile ECC error fails), "gpu-retired-pages" (a page retirement
// pending fails: the GPU needs a reset to retire it) and "gpu-temperature" (above max_temp_c
// fails), in that order.
std::vector<Check> gpu_checks(const std::vector<GpuReading>& gpus, double max_temp_c);

}  // namespace orch::agent
