#pragma once
// The filesystem probe: how fast a directory takes a write and gives it back, and how much room
// it has. Checkpoints land in such a directory, so a slow or full one costs training time.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/probe_check.h"

namespace orch::agent {

struct FsProbe {
  std::string dir;
  std::int64_t bytes = 0;            // written and read back (rounded up to whole 4 KiB blocks)
  bool direct = false;               // O_DIRECT was used (no page cache on either side)
  std::optional<double> write_mb_s;  // MB = 10^6 bytes; the write includes its fsync
  std::optional<double> read_mb_s;
  std::optional<std::int64_t> free_bytes;  // statvfs: available to unprivileged users
  std::string error;                       // what failed in the write/read test, if anything
  std::string free_error;                  // why statvfs failed, if it did
};

// Writes `bytes` to a temporary file in dir (O_DIRECT when the filesystem takes it, else
// buffered writes and fsync), reads it back (after POSIX_FADV_DONTNEED, so from the device where
// the kernel allows), checks the data, deletes the file. bytes == 0 skips the test and only
// measures free space.
FsProbe probe_filesystem(const std::string& dir, std::int64_t bytes);

// "fs-write" (an error fails; absent when the test was skipped) and "fs-free" (less than
// min_free_bytes available fails).
std::vector<Check> fs_checks(const FsProbe& probe, std::int64_t min_free_bytes);

// "1.5 GiB", for details people read.
std::string human_bytes(std::int64_t bytes);

}  // namespace orch::agent
