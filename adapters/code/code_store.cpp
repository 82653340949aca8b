#include "adapters/code/code_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "scheduler/common/ustar.h"

namespace orch {
namespace {

bool is_hex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Error bad(std::string message) {
  return make_error(ErrorKind::invalid, std::move(message));
}

Error io_error(const std::string& what, const std::string& path) {
  return make_error(ErrorKind::io, what + " " + path + ": " + std::strerror(errno));
}

// Writes all of bytes to fd.
bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Writes bytes to a new temporary file (0600) in dir, fsyncs it and renames it to path.
Result<void> write_atomically(const std::string& dir, const std::string& path,
                              std::string_view bytes) {
  std::string tmp = dir + "/.upload-XXXXXX";
  const int fd = ::mkstemp(tmp.data());  // 0600
  if (fd < 0) return io_error("cannot create a temporary file in", dir);
  const bool written = write_all(fd, bytes) && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!written) {
    ::unlink(tmp.c_str());
    errno = saved;
    return io_error("cannot write", tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    errno = e;
    return io_error("cannot rename a temporary file to", path);
  }
  if (const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); d >= 0) {
    ::fsync(d);
    ::close(d);
  }
  return Ok{};
}

// Every proper prefix of name ("a", "a/b" of "a/b/c").
std::vector<std::string> parents(const std::string& name) {
  std::vector<std::string> out;
  for (std::size_t slash = name.find('/'); slash != std::string::npos;
       slash = name.find('/', slash + 1)) {
    out.push_back(name.substr(0, slash));
  }
  return out;
}

}  // namespace

std::string sha256_of(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

Result<void> check_workdir_archive(std::string_view bytes, const ArchiveLimits& limits) {
  using namespace ustar;
  if (bytes.size() > limits.max_bytes) {
    return bad("the archive is " + std::to_string(bytes.size()) + " bytes, over the limit of " +
               std::to_string(limits.max_bytes));
  }
  if (bytes.size() % kBlock != 0)
    return bad("the archive is not a whole number of 512-byte blocks");
  std::set<std::string> names;
  std::set<std::string> symlinks;
  std::size_t at = 0;
  bool ended = false;
  while (at + kBlock <= bytes.size()) {
    const std::string_view block = bytes.substr(at, kBlock);
    if (is_zero_block(block)) {
      ended = at + 2 * kBlock <= bytes.size() && is_zero_block(bytes.substr(at + kBlock, kBlock));
      if (!ended) return bad("the archive ends after a single zero block");
      if (!is_zero_block(bytes.substr(at))) return bad("the archive holds data after its end");
      break;
    }
    auto member = parse_header(block);
    if (!member) return member.error();
    // What `tar -C dir -cf a.tar .` writes: "./" for the tree itself and "./" before each name.
    if (member->name.rfind("./", 0) == 0) member->name.erase(0, 2);
    if (member->name == "." && member->kind == Kind::directory) {
      at += kBlock;
      continue;
    }
    if (auto ok = check_member_name(member->name); !ok) return ok.error();
    if (member->kind == Kind::symlink) {
      if (auto ok = check_symlink_target(member->name, member->link); !ok) return ok.error();
      symlinks.insert(member->name);
    }
    if (!names.insert(member->name).second) {
      return bad("the member \"" + member->name + "\" is in the archive twice");
    }
    if (names.size() > limits.max_members) {
      return bad("the archive holds more than " + std::to_string(limits.max_members) + " members");
    }
    const std::uint64_t data = member->size + padding(member->size);
    if (member->size > bytes.size() || data > bytes.size() - at - kBlock) {
      return bad("the archive is cut short in the member \"" + member->name + "\"");
    }
    at += kBlock + data;
  }
  if (!ended) return bad("the archive is cut short: it has no end (two zero blocks)");
  for (const std::string& name : names) {
    for (const std::string& parent : parents(name)) {
      if (symlinks.count(parent)) {
        return bad("the member \"" + name + "\" lies below the symlink \"" + parent +
                   "\" of the same archive, which could carry it out of the tree");
      }
    }
  }
  return Ok{};
}

CodeStore::CodeStore(std::string dir, ArchiveLimits limits)
    : dir_(std::move(dir)), limits_(limits) {}

std::string CodeStore::archive_path(std::string_view sha256) const {
  return dir_ + "/" + std::string(sha256) + ".tar";
}

std::string CodeStore::uploaders_path(std::string_view sha256) const {
  return dir_ + "/" + std::string(sha256) + ".uploaders";
}

std::vector<std::string> CodeStore::uploaders(std::string_view sha256) const {
  std::vector<std::string> out;
  if (!is_hex64(sha256)) return out;
  std::lock_guard lock(mu_);
  std::ifstream in(uploaders_path(sha256));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

Result<std::int64_t> CodeStore::find(std::string_view sha256, const std::string& user) const {
  const Error missing = make_error(
      ErrorKind::not_found, "no archive " + std::string(sha256.substr(0, 64)) + " uploaded by " +
                                user + " (PUT /api/v1/code/{sha256} first)");
  if (!is_hex64(sha256)) return missing;
  const auto who = uploaders(sha256);
  if (std::find(who.begin(), who.end(), user) == who.end()) return missing;
  struct stat st {};
  if (::stat(archive_path(sha256).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return missing;
  return static_cast<std::int64_t>(st.st_size);
}

Result<void> CodeStore::add_uploader(std::string_view sha256, const std::string& user) {
  std::lock_guard lock(mu_);
  std::string text;
  {
    std::ifstream in(uploaders_path(sha256));
    std::ostringstream all;
    all << in.rdbuf();
    text = all.str();
  }
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line == user) return Ok{};
  }
  text += user + "\n";
  return write_atomically(dir_, uploaders_path(sha256), text);
}

Result<std::int64_t> CodeStore::store(std::string_view sha256, std::string_view body,
                                      const std::string& user) {
  if (!is_hex64(sha256)) {
    return bad("the archive's name must be its SHA-256 as 64 lowercase hex digits");
  }
  if (user.empty() || user.find_first_of(std::string("\n\r\0", 3)) != std::string::npos) {
    return bad("the uploader's name is empty or holds a line break");
  }
  const std::string actual = sha256_of(body);
  if (actual != sha256) {
    return bad("the body's SHA-256 is " + actual + ", not the " + std::string(sha256) +
               " it was sent as (a damaged or truncated upload)");
  }
  if (auto ok = check_workdir_archive(body, limits_); !ok) {
    return bad("refused archive: " + ok.error().message);
  }
  if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
    return io_error("cannot create", dir_);
  }
  const std::string path = archive_path(sha256);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || static_cast<std::uint64_t>(st.st_size) != body.size()) {
    if (auto ok = write_atomically(dir_, path, body); !ok) return ok.error();
  }
  if (auto ok = add_uploader(sha256, user); !ok) return ok.error();
  return static_cast<std::int64_t>(body.size());
}

}  // namespace orch
