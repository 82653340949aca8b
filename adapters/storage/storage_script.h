#pragma once
// The shell scripts that list (with sizes and SHA-256) and delete a checkpoint or dataset copy
// on a site's storage, and the parsers of what they print. Pure: no I/O. The same scripts run
// here through /bin/sh (local_storage.h, LocalSite) and on a login node over SSH (SlurmSite).
//
// The scripts are POSIX sh using GNU coreutils and findutils (`stat`, `find -printf`, and a
// `sha256sum` with -z/--zero, which every current Linux distribution ships; an older one fails
// the listing with ErrorKind::io naming the option). Every value (the
// path, the names of files to hash) is quoted with shell_quote(); nothing is pasted into shell
// syntax.
//
// Listing output: NUL-separated records, so any file name (spaces, newlines, quotes, bytes that
// are not UTF-8) reads back exactly:
//
//   orchestrate-manifest-v1 \0
//   dir | file | missing \0
//   <size> <relative path> \0          one per regular file (`find -printf '%s %P\0'`);
//                                       a single file: "<size> " (path "")
//   hashes \0
//   <64 hex>  <./relative path> \0     `sha256sum -z` (which does not escape names with -z)
//   end \0                              the script ran to completion
//
// What is listed: regular files, recursively, without following symbolic links inside the tree
// (a link to a file or directory is skipped, so nothing outside the copy is ever read, and a
// link cannot make a file appear twice); sockets, FIFOs and devices are skipped too. The root
// path itself may be a symbolic link (it is followed). A root that does not exist (or a dangling
// link, or a path through a file) is "missing".
//
// Confinement (issue 37): a request with `within` (a job's checkpoint directory, orchestrate's
// replica directory) lists the copy only when, after resolving every symbolic link
// (`realpath`), it lies strictly inside the resolved directory, and that directory is not
// itself a link; otherwise the script prints `outside` in place of the kind and reads nothing
// of the copy (ErrorKind::forbidden). The check is made again where the script enters the
// copy (`cd -P`, then `pwd -P`) or opens it (fd 3, `readlink -f /dev/fd/3`), and a file named
// for Hash::listed is hashed only when no link lies on its way, so a link swapped in meanwhile
// is not followed out either. Deletion is confined the same way (remove_script).

#include <chrono>
#include <string>

#include "scheduler/common/result.h"
#include "scheduler/model/manifest.h"
#include "scheduler/model/site_types.h"

namespace orch::storage {

// The most bytes of quoted names a Hash::listed script carries: the whole script is one
// argument of `sh -c` (here) or of the login shell (sshd), which Linux limits to 128 KiB.
inline constexpr std::size_t kMaxListedBytes = 64 * 1024;

// The listing script for request.path. ErrorKind::forbidden when request.within is set and the
// path is not strictly inside it (lexically; the script checks again after resolving links).
// ErrorKind::invalid for an empty path, a value with a NUL byte, a `within` that is not an
// absolute directory below /, a hash_files entry that is not a plain relative path ("", absolute,
// "." or ".." components: a single-file copy is hashed under Hash::listed when hash_files names
// ""), or more names than kMaxListedBytes holds. A relative path is relative to the shell's working
// directory (the remote user's home over SSH); absolute paths are what callers should pass.
Result<std::string> manifest_script(const ManifestRequest& request);

// Reads what the listing script printed. The Manifest (files sorted by path; sha256 set for the
// files that were hashed), or ErrorKind::not_found ("<path> does not exist at the site"), or
// ErrorKind::forbidden when a confined listing found the copy outside its directory, or
// ErrorKind::io with the end of stderr when the script failed (a permission denied, a tool
// missing, a file vanishing while hashed) or its output is cut short or malformed. Text printed
// before the first record (a chatty login profile) is skipped.
Result<Manifest> parse_manifest_output(const std::string& out, const std::string& err,
                                       int exit_status, const std::string& path);

// Deletes request.path, which must lie strictly inside request.within (issue 37): lexically
// here (after normalising ".", ".." and repeated or trailing slashes; ErrorKind::forbidden
// outside it or for the directory itself, ErrorKind::invalid for an empty or relative path, NUL
// bytes, or no usable `within`), and at the site after resolving symbolic links (a final link
// too): a path or parent that resolves outside, or a directory that is itself a link, deletes
// nothing and prints "orchestrate-remove: outside" (check_remove_output: forbidden). The
// script then enters the resolved parent and runs `rm -rf -- ./<name>`, so rm never follows a
// link out. Deleting a path that does not exist succeeds.
Result<std::string> remove_script(const RemoveRequest& request);

// Reads how the removal script ended: ErrorKind::forbidden when it refused the path as outside
// its directory; success on exit status 0; else ErrorKind::io naming the path with the end of
// stderr.
Result<void> check_remove_output(const std::string& out, const std::string& err, int exit_status,
                                 const RemoveRequest& request);

// Deadlines for a site's storage commands, for providers that run them remotely (a login node
// over SSH, a helper pod through pods/exec). Hashing reads every byte (tens of GB take minutes
// on a busy parallel filesystem) and deleting a large tree takes a while, so such a call first
// lists the copy without hashing (within `base`) and then gets this much: `base` plus the
// listing's bytes at 20 MB/s, or plus 5 ms per file. A connection that dies mid-call is then
// noticed within a bounded time, never an hour.
std::chrono::milliseconds hash_deadline(std::chrono::milliseconds base, const Manifest& sizes);
std::chrono::milliseconds delete_deadline(std::chrono::milliseconds base, const Manifest& listing);

// The last `max_bytes` of a command's stderr, trimmed, for error messages.
std::string stderr_tail(const std::string& err, std::size_t max_bytes = 400);

}  // namespace orch::storage
