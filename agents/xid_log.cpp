// See xid_log.h.
#include "agents/xid_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <set>

#include "scheduler/model/xid_codes.h"

namespace orch::agent {
namespace {

constexpr std::string_view kXidMarker = "NVRM: Xid";
constexpr size_t kMaxLineBytes = 512;
constexpr off_t kMaxFileTail = 8 << 20;
constexpr size_t kMaxKmsgBytes = 16 << 20;

std::string read_file_tail(const std::string& path, std::string* error) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return {};
  }
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > kMaxFileTail) {
    lseek(fd, st.st_size - kMaxFileTail, SEEK_SET);
  }
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      if (out.size() > static_cast<size_t>(kMaxFileTail)) {
        out.erase(0, out.size() - static_cast<size_t>(kMaxFileTail));
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) *error = path + ": " + std::strerror(errno);
    break;
  }
  close(fd);
  return out;
}

// Each read() of /dev/kmsg returns one record ("prio,seq,usec,flags;message\n" plus indented
// continuation lines). EAGAIN: nothing more buffered. EPIPE: the record we were at was
// overwritten; the next read continues with the oldest one left.
std::optional<std::string> read_kmsg(std::string* error) {
  int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *error = std::string("/dev/kmsg: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::string out;
  char buf[8192];
  bool read_any = false;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      read_any = true;
      out.append(buf, static_cast<size_t>(n));
      if (out.empty() || out.back() != '\n') out += '\n';
      if (out.size() > kMaxKmsgBytes) break;
      continue;
    }
    if (n < 0 && (errno == EINTR || errno == EPIPE)) continue;
    if (n < 0 && errno != EAGAIN && !read_any) {
      *error = std::string("/dev/kmsg: ") + std::strerror(errno);
      close(fd);
      return std::nullopt;
    }
    break;
  }
  close(fd);
  return out;
}

}  // namespace

const std::vector<int>& fatal_xid_codes() {
  static const std::vector<int> codes = [] {
    std::vector<int> all(kResetXidCodes.begin(), kResetXidCodes.end());
    all.insert(all.end(), kAmbiguousXidCodes.begin(), kAmbiguousXidCodes.end());
    std::sort(all.begin(), all.end());
    return all;
  }();
  return codes;
}

bool is_fatal_xid(int code) {
  return is_probe_failing_xid(code);
}

std::optional<int> xid_code(std::string_view line) {
  size_t at = line.find(kXidMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + kXidMarker.size());
  auto skip_spaces = [&] {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  };
  skip_spaces();
  if (!rest.empty() && rest.front() == '(') {  // the device: "(PCI:0000:3b:00)"
    size_t close_paren = rest.find(')');
    if (close_paren == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(close_paren + 1);
  }
  skip_spaces();
  if (!rest.empty() && rest.front() == ':') rest.remove_prefix(1);
  skip_spaces();
  int code = 0;
  size_t digits = 0;
  while (digits < rest.size() && digits < 6 && rest[digits] >= '0' && rest[digits] <= '9') {
    code = code * 10 + (rest[digits] - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return code;
}

std::vector<std::string> find_xid_lines(std::string_view log, size_t max_lines) {
  std::deque<std::string> kept;
  size_t start = 0;
  while (start < log.size()) {
    size_t nl = log.find('\n', start);
    if (nl == std::string_view::npos) nl = log.size();
    std::string_view line = log.substr(start, nl - start);
    start = nl + 1;
    size_t at = line.find(kXidMarker);
    if (at == std::string_view::npos) continue;
    line = line.substr(at, kMaxLineBytes);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    kept.emplace_back(line);
    if (kept.size() > max_lines) kept.pop_front();
  }
  return {kept.begin(), kept.end()};
}

Check xid_check(const std::vector<std::string>& xid_lines) {
  Check c{"xid", true, ""};
  std::set<int> fatal, other;
  for (const std::string& line : xid_lines) {
    auto code = xid_code(line);
    if (!code) continue;
    (is_fatal_xid(*code) ? fatal : other).insert(*code);
  }
  auto list = [](const std::set<int>& codes) {
    std::string s;
    for (int code : codes) s += (s.empty() ? "" : ", ") + std::to_string(code);
    return s;
  };
  if (!fatal.empty()) {
    c.ok = false;
    c.detail = "Xid " + list(fatal) + " in the kernel log";
    if (!other.empty()) c.detail += " (also " + list(other) + ")";
  } else if (!other.empty()) {
    c.detail = "only Xid " + list(other) + " in the kernel log, none that condemns the node";
  } else {
    c.detail = "no Xid in the kernel log";
  }
  return c;
}

std::optional<std::string> read_kernel_log(const std::string& path, std::string* error) {
  if (path.empty()) return read_kmsg(error);
  std::string err;
  std::string text = read_file_tail(path, &err);
  if (!err.empty()) {
    *error = err;
    return std::nullopt;
  }
  return text;
}

}  // namespace orch::agent
