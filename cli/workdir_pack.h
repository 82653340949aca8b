#pragma once
// Packs a job's `workdir:` for `orchestrate job submit` (issue 40, docs/config.md "workdir"):
// the tree below a directory as a ustar archive (scheduler/common/ustar.h) whose bytes depend on
// the tree alone (members in name order, uid/gid 0, mtime 0, modes 0755/0644 by the owner's
// execute bit, directories 0755), so an unchanged tree has the same SHA-256 and is never sent
// twice.
//
// Left out: `.git` (always), whatever the tree's .gitignore and .orchignore files leave out
// (cli/ignore_rules.h), and special files (fifos, sockets, devices: listed in `skipped`). A
// symlink is kept only when it stays inside the tree (scheduler/common/ustar.h's rule); one
// that points out of it is refused, naming it, and never followed. The size is decided from
// the files' sizes before any is read: a tree over the limit (a 10 GiB sparse file included)
// is refused at once, naming its largest entries.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/result.h"

namespace orch {

inline constexpr std::uint64_t kDefaultWorkdirLimit = 256ULL << 20;  // 256 MiB

struct PackedWorkdir {
  std::string archive;              // the ustar bytes
  std::string sha256;               // of archive, lowercase hex
  std::uint64_t content_bytes = 0;  // the files' bytes
  std::size_t files = 0;
  std::vector<std::string> skipped;  // special files left out, as "path (fifo)"
};

// Packs the directory root. invalid (with a sentence that names the path and says what to do)
// for: a root that is not a directory, files over `limit` bytes in all, a symlink out of the
// tree, a name a ustar archive cannot hold; io for a file that cannot be read or changed while
// it was read.
Result<PackedWorkdir> pack_workdir(const std::string& root,
                                   std::uint64_t limit = kDefaultWorkdirLimit);

// "256 MiB", "1.5 GiB", "10 KiB", "512 B".
std::string human_bytes(std::uint64_t bytes);

// A size as a flag takes it: bytes ("1048576"), or a number with K, M, G (or KiB, MiB, GiB;
// powers of 1024). nullopt for anything else or zero.
std::optional<std::uint64_t> parse_size(const std::string& text);

}  // namespace orch
