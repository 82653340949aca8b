#pragma once
// NVIDIA Xid codes, one list for everyone who judges them (issue 43): the agent's live watch
// (agents/gpu_watch.h) ends an attempt at once on a code of kResetXidCodes, and the probe's
// `xid` check (agents/xid_log.h) fails a node on those and on the ambiguous ones below.
// Header-only: the agent compiles it in without linking the scheduler.
//
// kResetXidCodes: the Xids NVIDIA documents as needing a GPU reset or node service (Xid catalog,
// https://docs.nvidia.com/deploy/xid-errors/): 48 double-bit ECC, 61/62 internal micro-controller
// breakpoint/halt, 63/64 row remapping recorded/failed, 74 NVLink, 79 fallen off the bus, 92 high
// single-bit ECC rate, 94/95 contained/uncontained ECC, 119/120 GSP RPC timeout/error, 140
// unrecovered ECC. The log rule xid-fatal (scheduler/lifecycle/failure_rules.cpp) reads the same
// hardware set from a job's log, without 63 and 92 (which the driver logs while the job can still
// finish: they condemn the node, not the line of output).
//
// kAmbiguousXidCodes: 13, 31, 43, 45 (an application's own illegal address looks the same from
// the log) and 68, 69 (engine faults): the probe fails a node on them, the live watch does not
// end a job for them.

#include <algorithm>
#include <array>

namespace orch {

inline constexpr std::array<int, 13> kResetXidCodes = {48, 61, 62, 63,  64,  74, 79,
                                                       92, 94, 95, 119, 120, 140};
inline constexpr std::array<int, 6> kAmbiguousXidCodes = {13, 31, 43, 45, 68, 69};

// A fatal Xid: the GPU needs a reset or service; a job on it cannot go on.
constexpr bool is_reset_xid(int code) {
  return std::find(kResetXidCodes.begin(), kResetXidCodes.end(), code) != kResetXidCodes.end();
}

// A code the probe's `xid` check fails a node on: the fatal ones and the ambiguous ones.
constexpr bool is_probe_failing_xid(int code) {
  return is_reset_xid(code) || std::find(kAmbiguousXidCodes.begin(), kAmbiguousXidCodes.end(),
                                         code) != kAmbiguousXidCodes.end();
}

}  // namespace orch
