#include "cli/workdir_pack.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include "cli/ignore_rules.h"
#include "scheduler/common/ustar.h"

namespace orch {
namespace {

struct Entry {
  std::string rel;  // relative to the root
  ustar::Kind kind = ustar::Kind::file;
  std::uint32_t mode = 0644;
  std::uint64_t size = 0;
  std::string link;
};

Error bad(std::string message) {
  return make_error(ErrorKind::invalid, std::move(message));
}

Error io_error(const std::string& what, const std::string& path) {
  return make_error(ErrorKind::io, what + " " + path + ": " + std::strerror(errno));
}

std::optional<std::string> read_small_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::string out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (1 << 20)) {
    char buf[8192];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
      out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

const char* special_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "fifo";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "device";
  return "special file";
}

class Walker {
 public:
  Walker(std::string root, PackedWorkdir& out) : root_(std::move(root)), out_(out) {}

  Result<std::vector<Entry>> walk() {
    if (auto ok = walk_dir(""); !ok) return ok.error();
    return std::move(entries_);
  }

 private:
  std::string full(const std::string& rel) const { return rel.empty() ? root_ : root_ + "/" + rel; }

  Result<void> walk_dir(const std::string& rel) {
    for (const char* name : {".gitignore", ".orchignore"}) {
      if (auto text = read_small_file(full(rel.empty() ? name : rel + "/" + name))) {
        rules_.add_file(rel, *text);
      }
    }
    DIR* dir = ::opendir(full(rel).c_str());
    if (!dir) return io_error("cannot list", full(rel));
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(dir)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      if (auto ok = visit(rel.empty() ? name : rel + "/" + name, name); !ok) return ok;
    }
    return Ok{};
  }

  Result<void> visit(const std::string& rel, const std::string& name) {
    if (name == ".git") return Ok{};
    struct stat st {};
    if (::lstat(full(rel).c_str(), &st) != 0) return io_error("cannot read", full(rel));
    const bool is_dir = S_ISDIR(st.st_mode);
    if (rules_.ignored(rel, is_dir)) return Ok{};
    if (auto ok = ustar::check_member_name(rel); !ok) {
      return bad("workdir: cannot pack " + full(rel) + ": " + ok.error().message);
    }
    Entry e;
    e.rel = rel;
    if (is_dir) {
      e.kind = ustar::Kind::directory;
      e.mode = 0755;
      entries_.push_back(e);
      return walk_dir(rel);
    }
    if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<std::size_t>(st.st_size) + 1, '\0');
      const ssize_t n = ::readlink(full(rel).c_str(), target.data(), target.size());
      if (n < 0) return io_error("cannot read the symlink", full(rel));
      target.resize(static_cast<std::size_t>(n));
      if (auto ok = ustar::check_symlink_target(rel, target); !ok) {
        return bad("workdir: " + ok.error().message +
                   "; a workdir may hold only symlinks that stay inside it (never followed): "
                   "remove it, or leave it out with a line \"/" +
                   rel + "\" in .orchignore");
      }
      e.kind = ustar::Kind::symlink;
      e.mode = 0777;
      e.link = target;
      entries_.push_back(e);
      return Ok{};
    }
    if (!S_ISREG(st.st_mode)) {
      out_.skipped.push_back(rel + " (" + special_kind(st.st_mode) + ")");
      return Ok{};
    }
    e.mode = (st.st_mode & S_IXUSR) ? 0755 : 0644;
    e.size = static_cast<std::uint64_t>(st.st_size);
    entries_.push_back(e);
    return Ok{};
  }

  std::string root_;
  PackedWorkdir& out_;
  IgnoreRules rules_;
  std::vector<Entry> entries_;
};

// The refusal of a tree over the limit: its total, and its largest files and top-level entries.
Error too_big(const std::string& root, const std::vector<Entry>& entries, std::uint64_t total,
              std::uint64_t limit) {
  std::map<std::string, std::uint64_t> top;  // first component -> bytes below it
  std::vector<const Entry*> files;
  for (const Entry& e : entries) {
    if (e.kind != ustar::Kind::file) continue;
    const std::size_t slash = e.rel.find('/');
    if (slash != std::string::npos) top[e.rel.substr(0, slash) + "/"] += e.size;
    files.push_back(&e);
  }
  std::vector<std::pair<std::string, std::uint64_t>> largest;
  for (const Entry* f : files) largest.emplace_back(f->rel, f->size);
  for (const auto& [dir, bytes] : top) largest.emplace_back(dir, bytes);
  std::sort(largest.begin(), largest.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
  std::string list;
  for (std::size_t i = 0; i < largest.size() && i < 6; ++i) {
    list += (i ? ", " : "") + largest[i].first + " (" + human_bytes(largest[i].second) + ")";
  }
  return bad("workdir " + root + " holds " + human_bytes(total) + " of files, over the limit of " +
             human_bytes(limit) + "; the largest: " + list +
             ". Leave out what the job does not need with .orchignore (a line such as data/ or "
             "*.ckpt), or raise the limit with --workdir-limit");
}

// Appends the file's bytes to out and to the hash; io when it cannot be read or its size
// changed since it was listed.
Result<void> append_file(const std::string& path, std::uint64_t size, std::string& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return io_error("cannot read", path);
  const std::size_t start = out.size();
  out.resize(start + size);
  std::uint64_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, out.data() + start + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::uint64_t>(n);
  }
  char extra = 0;
  const bool grew = got == size && ::read(fd, &extra, 1) > 0;
  ::close(fd);
  if (got != size || grew) {
    return make_error(ErrorKind::io,
                      "workdir: " + path + " changed while it was packed; try again");
  }
  out.append(ustar::padding(size), '\0');
  return Ok{};
}

std::string sha256_hex_of(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

}  // namespace

Result<PackedWorkdir> pack_workdir(const std::string& root, std::uint64_t limit) {
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return bad("workdir " + root + " is not a directory" +
               (errno == ENOENT ? std::string(" (it does not exist)") : std::string()) +
               "; workdir: names a directory, relative to the job file's own directory");
  }
  PackedWorkdir out;
  auto entries = Walker(root, out).walk();
  if (!entries) return entries.error();
  std::uint64_t total = 0;
  for (const Entry& e : *entries) total += e.size;
  if (total > limit) return too_big(root, *entries, total, limit);
  for (const Entry& e : *entries) {
    auto header = ustar::header({e.rel, e.kind, e.mode, e.size, e.link});
    if (!header)
      return bad("workdir: cannot pack " + root + "/" + e.rel + ": " + header.error().message);
    out.archive += *header;
    if (e.kind != ustar::Kind::file) continue;
    if (auto ok = append_file(root + "/" + e.rel, e.size, out.archive); !ok) return ok.error();
    ++out.files;
  }
  out.archive += ustar::end_of_archive();
  out.content_bytes = total;
  out.sha256 = sha256_hex_of(out.archive);
  return out;
}

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  char text[32];
  if (u == 0) {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(text, sizeof text, "%.1f %s", v, units[u]);
  }
  return text;
}

std::optional<std::uint64_t> parse_size(const std::string& text) {
  std::size_t i = 0;
  std::uint64_t n = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (n > (UINT64_MAX - 9) / 10) return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(text[i] - '0');
  }
  if (i == 0) return std::nullopt;
  std::string unit = text.substr(i);
  if (unit == "B") unit.clear();
  if (unit.size() == 3 && unit.substr(1) == "iB") unit = unit.substr(0, 1);
  int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  if (shift < 0 || n == 0 || n > (UINT64_MAX >> shift)) return std::nullopt;
  return n << shift;
}

}  // namespace orch
