#pragma once
// The live watch's judgement (issue 43): what the kernel log's Xid lines and nvidia-smi's
// samples say about the node's GPUs while a job runs, and the fault that ends the attempt. Pure:
// the lines and samples come in with the times they were read (agents/live_watch.h does the
// reading), so it is tested on text.
//
// A fault is the first of:
// - a kernel log line with a fatal Xid (scheduler/model/xid_codes.h, kResetXidCodes): cause
//   gpu_xid, the GPU named by its PCI id and, when nvidia-smi has listed the GPUs, its index;
// - a sample whose uncorrectable volatile ECC count of some GPU is above that GPU's first
//   sample (a rise, not a count: a node may come with old errors): cause gpu_ecc.
// Later faults are not recorded: the first one ends the attempt, and it names the node.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch::agent {

// A fatal or other Xid from one kernel log line.
struct XidEvent {
  int code = 0;
  std::string pci;          // "0000:3b:00" (domain:bus:device, lower case); "" when not given
  std::string description;  // "GPU has fallen off the bus" (pid= and name= parts left out)
};
// nullopt when the line holds no "NVRM: Xid" with a code.
std::optional<XidEvent> parse_xid_event(std::string_view line);

// A PCI id as the kernel log and nvidia-smi print it ("PCI:0000:3b:00", "00000000:3B:00.0") in
// one form: "0000:3b:00" (4-digit domain, bus, device; no function). "" when it does not parse.
std::string normalize_pci(std::string_view id);

// nvidia-smi's query for the watch, in the order parse_watch_sample expects.
inline constexpr const char* kWatchQueryFields =
    "index,pci.bus_id,ecc.errors.uncorrected.volatile.total,temperature.gpu,power.draw,"
    "clocks_throttle_reasons.active";
std::vector<std::string> watch_query_arguments();

struct GpuSample {
  int index = 0;
  std::string pci;  // normalized; "" when not given
  std::optional<std::int64_t> ecc_uncorrected;
  std::optional<double> temperature_c;
  std::optional<double> power_w;
  std::optional<std::uint64_t> throttle_mask;  // clocks_throttle_reasons.active, "0x..." hex
};
// `--format=csv,noheader,nounits` output of kWatchQueryFields; lines that are not a reading
// ("Unable to determine the device handle for GPU...") are skipped. [N/A] values are nullopt.
std::vector<GpuSample> parse_watch_sample(std::string_view csv);

// The reasons in a throttle mask that say something about the node: hw_slowdown, hw_thermal,
// hw_power_brake, sw_thermal, sw_power_cap (idle, application clocks, sync boost are left out).
std::vector<std::string> throttle_names(std::uint64_t mask);

struct GpuFault {
  std::string cause;  // "gpu_xid" | "gpu_ecc"
  std::optional<int> gpu;
  std::string pci;
  std::optional<int> xid;
  std::optional<std::int64_t> ecc_uncorrected;
  std::string detail;  // "Xid 79 on GPU 3 (PCI 0000:3b:00): GPU has fallen off the bus"
  std::int64_t at_ms = 0;
};

class GpuWatch {
 public:
  // A kernel log line read at wall_ms; the fault when it is the first.
  std::optional<GpuFault> on_kernel_line(std::string_view line, std::int64_t wall_ms);
  // A sample's readings; the fault when an ECC count rose and it is the first.
  std::optional<GpuFault> on_sample(const std::vector<GpuSample>& gpus, std::int64_t wall_ms);
  // A sample that could not be taken (nvidia-smi timed out, failed): shown in the readings.
  void on_sample_error(const std::string& why);

  const std::optional<GpuFault>& fault() const { return fault_; }
  // The readings as a JSON object for heartbeats' "watch" ("" before any sample):
  // {"temp_max_c":..,"power_w":..,"ecc_uncorrected":..,"throttle":[..],"gpus":N} or
  // {"error":"..."} after a failed sample.
  const std::string& watch_json() const { return watch_json_; }
  // The GPU index of a PCI id, from the samples so far.
  std::optional<int> gpu_of(const std::string& pci) const;

 private:
  std::optional<GpuFault> first(GpuFault f);

  std::optional<GpuFault> fault_;
  std::map<std::string, int> pci_to_gpu_;
  std::map<int, std::int64_t> ecc_baseline_;
  std::string watch_json_;
};

// The fault's members for a record, without braces: "cause":..,"gpu":..,...,"node":..,
// "task_rank":..,"at_ms":.. (task_rank < 0: left out).
std::string fault_members(const GpuFault& fault, const std::string& node, std::int64_t task_rank);

}  // namespace orch::agent
