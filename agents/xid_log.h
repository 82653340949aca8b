#pragma once
// NVIDIA Xid events in the kernel log: finding them, reading their codes, and deciding which
// codes mean the node is unfit for work. Finding and judging are pure functions of the text,
// tested on real log excerpts (tests/fixtures/nvidia-smi/).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/probe_check.h"

namespace orch::agent {

// The codes that fail the "xid" check. Each points at the GPU, its memory, its links or its
// firmware rather than at one application's bug; see agents/README.md ("Xid codes") for why each
// is on the list. Others (for example 32, a corrupted push buffer) are listed but pass. The codes
// are scheduler/model/xid_codes.h's: kResetXidCodes and kAmbiguousXidCodes, sorted.
const std::vector<int>& fatal_xid_codes();
bool is_fatal_xid(int code);

// The Xid code of a log line holding "NVRM: Xid", in any of the driver's forms:
//   NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus.
//   NVRM: Xid (0000:01:00): 13, 0001 00000000 ...
// nullopt when the line holds no Xid or its code does not parse.
std::optional<int> xid_code(std::string_view line);

// The Xid lines of a kernel log (a file, or /dev/kmsg records), each cut to start at "NVRM: Xid"
// (timestamps and syslog prefixes differ between sources) and to at most 512 bytes. Only the
// last max_lines are kept: a faulting application can log thousands.
std::vector<std::string> find_xid_lines(std::string_view log, size_t max_lines = 100);

// "xid": fails when any line carries a fatal code, and names those codes.
Check xid_check(const std::vector<std::string>& xid_lines);

// The kernel log to search. With a path: the file's last 8 MiB. Without: what /dev/kmsg holds
// now, read without blocking. nullopt (and *error) when it cannot be read: containers often
// have no /dev/kmsg, and kernel.dmesg_restrict keeps it from unprivileged users.
std::optional<std::string> read_kernel_log(const std::string& path, std::string* error);

}  // namespace orch::agent
