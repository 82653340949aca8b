#pragma once
// Host lists: many node names in one short text, as Slurm prints them
// ("alpha-n[1-3,7],gpu[001-002],login"). Slurm's output is read with expand_hostlist; the store
// keeps an attempt's nodes as compress_hostlist writes them, so that a 2,048-node gang is a few
// bytes rather than 2,048 names to parse on every read.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"

namespace orch {

// The most names one list may expand to: a typo such as "n[1-99999999]" must not eat memory.
inline constexpr std::size_t kMaxHostListNames = std::size_t{1} << 16;

// "alpha-n[1-3,7],gpu[001-002],login" -> each name. Zero-padding kept ("gpu001"). Several
// brackets in a name give every combination ("n[1-2]-ib[3-4]" -> n1-ib3 n1-ib4 n2-ib3 n2-ib4).
// Empty -> no names. Unbalanced/nested brackets, empty items, reversed ranges, blanks and
// lists of more than kMaxHostListNames names are ErrorKind::invalid, quoting the list.
Result<std::vector<std::string>> expand_hostlist(std::string_view hostlist);

// A list that expand_hostlist reads back as exactly `names`, in their order (duplicates kept):
// runs of names that differ only in a trailing number become one bracket group
// ("n01 n02 n03 n07" -> "n[01-03,07]"). nullopt when some name cannot be written in a list:
// empty, or holding a blank, a control byte, ',', '[' or ']', or more than kMaxHostListNames
// names.
std::optional<std::string> compress_hostlist(const std::vector<std::string>& names);

}  // namespace orch
