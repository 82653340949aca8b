#pragma once
// POSIX ustar (pax's base format, POSIX.1-1988) headers, as the workdir archives of issue 40
// use them: the CLI writes them (cli/workdir_pack.h), the server checks every member of an
// upload before keeping it (adapters/code/code_store.h). Only what those archives hold:
// regular files, directories and symlinks; names up to 255 bytes (prefix + name), sizes up to
// 8 GiB - 1 (11 octal digits). Pure: the callers read and write the files.
//
// The rules a member must keep (check_member_name, check_symlink_target) are what makes an
// archive safe to extract with GNU tar into an empty directory: every name relative and normal
// (no "/" at the start, no "." or ".." component, no empty one), and every symlink's target
// relative, with ".." only at its start and never more of them than the link's own depth, so
// it resolves inside the tree however it is extracted. Whether a member's parent is a symlink
// of the same archive (which would carry a later member out) is the reader's to check: it
// sees every name.

#include <cstdint>
#include <string>
#include <string_view>

#include "scheduler/common/result.h"

namespace orch::ustar {

inline constexpr std::size_t kBlock = 512;
inline constexpr std::uint64_t kMaxSize = 077777777777ULL;  // 11 octal digits
inline constexpr std::size_t kMaxName = 255;                // prefix (155) + "/" + name (100)

enum class Kind { file, directory, symlink };

struct Member {
  std::string name;  // relative; a directory's without its trailing "/"
  Kind kind = Kind::file;
  std::uint32_t mode = 0644;  // permission bits only (0777)
  std::uint64_t size = 0;     // a file's bytes; 0 for directories and symlinks
  std::string link;           // a symlink's target
};

// The 512-byte header of m: uid and gid 0, no user or group names, mtime 0, so that the same
// tree always gives the same bytes. invalid when the name or target does not fit, or the size
// is over kMaxSize.
Result<std::string> header(const Member& m);

// Two zero blocks: the end of an archive.
std::string end_of_archive();

// Bytes of padding after a file of `size` bytes, up to the next block.
std::uint64_t padding(std::uint64_t size);

bool is_zero_block(std::string_view block);

// Reads one header block: checksum, "ustar" magic, octal fields. Any type other than a regular
// file ('0' or NUL), a directory ('5') or a symlink ('2') is invalid, with a message naming
// it (hard link, device, fifo, pax or GNU extension header). Names are not checked here.
Result<Member> parse_header(std::string_view block);

// invalid unless name is relative and normal (see above), at most kMaxName bytes, free of NUL
// and of control characters.
Result<void> check_member_name(std::string_view name);

// invalid unless a symlink at `name` with `target` stays inside the tree (see above).
Result<void> check_symlink_target(std::string_view name, std::string_view target);

}  // namespace orch::ustar
