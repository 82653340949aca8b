#pragma once
// The server's store of workdir archives (issue 40, docs/rest-api.md "Code"): one ustar archive
// per tree, named by its SHA-256, under <state directory>/code/:
//
//   <state>/code/<sha256>.tar         the archive as uploaded (0600), checked member by member
//   <state>/code/<sha256>.uploaders   who uploaded it: one API user name per line (0600)
//
// A user may name an archive in a job only after uploading it themselves (the same bytes,
// which the server hashes): knowing a hash is not enough, and whether someone else's tree is
// here is never told. Sites read archives from archive_path (staging, extraction); pruning
// old ones is theirs too. Thread-safe.

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"

namespace orch {

// What an uploaded archive may hold, beyond ustar's own rules (scheduler/common/ustar.h).
struct ArchiveLimits {
  std::uint64_t max_bytes = 1ULL << 30;  // the archive itself
  std::size_t max_members = 200000;
};

// invalid (with the member's name) unless `bytes` is a ustar archive of regular files,
// directories and symlinks that stay inside the tree, with normal relative names, no name
// twice, no member below a symlink of the archive, a complete last member and the two zero
// blocks that end it (nothing but zeros after them).
Result<void> check_workdir_archive(std::string_view bytes, const ArchiveLimits& limits = {});

// Lowercase hex SHA-256 of bytes (OpenSSL).
std::string sha256_of(std::string_view bytes);

class CodeStore {
 public:
  // dir: <state directory>/code, made (0700) on the first store.
  explicit CodeStore(std::string dir, ArchiveLimits limits = {});

  const std::string& dir() const { return dir_; }
  const ArchiveLimits& limits() const { return limits_; }
  // <dir>/<sha256>.tar (sha256 must be 64 lowercase hex digits).
  std::string archive_path(std::string_view sha256) const;
  std::string uploaders_path(std::string_view sha256) const;

  // The archive's size in bytes when it is here and `user` uploaded it; not_found otherwise.
  Result<std::int64_t> find(std::string_view sha256, const std::string& user) const;

  // Keeps body as the archive sha256 on behalf of user: invalid when sha256 is not 64
  // lowercase hex digits, body's SHA-256 is another, or a member breaks the rules
  // (check_workdir_archive); written to a temporary file (0600) in dir, fsynced and renamed,
  // so a reader sees the whole archive or none. An archive already here is not written again;
  // user is added to its uploaders. Returns the archive's size.
  Result<std::int64_t> store(std::string_view sha256, std::string_view body,
                             const std::string& user);

  // The users who uploaded sha256 (empty when none did or it is not here).
  std::vector<std::string> uploaders(std::string_view sha256) const;

 private:
  Result<void> add_uploader(std::string_view sha256, const std::string& user);

  std::string dir_;
  ArchiveLimits limits_;
  mutable std::mutex mu_;  // the uploaders files
};

}  // namespace orch
