#pragma once
// How a copy to or from a Kubernetes site resumes (issue 44): from the source's listing and what
// the destination already holds (both with sizes, scheduler/model/manifest.h), what is still to
// send. Pure: KubernetesSite's copies (kube_site_copy.cpp) list both sides, plan, then stream.
//
//   - a file missing at the destination, or larger there than at the source: sent whole;
//   - a file smaller there: a partial file from a copy that broke, continued from its size
//     (`tail -c +N` at the source, appended at the destination), then hashed on both sides: a
//     continued file that does not hash right is sent again whole;
//   - a file of the source's size: complete (skipped), unless the copy compares checksums (a
//     retry): then hashed on both sides first and sent whole when the hashes differ;
//   - nothing of the source at the destination (or a file where a directory is copied, or the
//     reverse): `fresh`, the copy is one stream of everything, as before any resumption.
// Files at the destination that the source lacks are left alone (rsync without --delete).

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/model/manifest.h"

namespace orch::kube {

struct CopyTail {
  std::string path;        // relative to the copy's root ("" for a single file)
  std::uint64_t from = 0;  // bytes already there
  std::uint64_t size = 0;  // the source's size
};

struct CopyPlan {
  bool fresh = false;
  std::vector<std::string> whole;    // sent whole, sorted
  std::vector<CopyTail> tails;       // continued from what arrived
  std::vector<std::string> compare;  // complete by size, to compare by SHA-256 (checksum only)
  std::uint64_t bytes_there = 0;     // bytes of the source already at the destination
  std::uint64_t bytes_to_send = 0;   // what the plan sends if every hash agrees
};

// `arrived` is the destination's listing of the same path (sizes; hashes are not read).
CopyPlan plan_copy(const Manifest& source, const Manifest& arrived, bool checksum);

// Of `names`, those whose SHA-256 in `source` and `arrived` differ, or that either listing did
// not hash (missing, unreadable): sorted as given.
std::vector<std::string> hash_mismatches(const Manifest& source, const Manifest& arrived,
                                         const std::vector<std::string>& names);

// The names of `paths` as `tar -c --null -T -` reads them from the copy's root ("./<path>", so
// that no name reads as an option) or, for a single file (path ""), from its parent directory
// (`base`): NUL-terminated.
std::string tar_name_list(const std::vector<std::string>& paths, const std::string& base);

}  // namespace orch::kube
