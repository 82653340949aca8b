#include "scheduler/common/ustar.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

namespace orch::ustar {
namespace {

// Field offsets and lengths of a ustar header.
struct Field {
  std::size_t at;
  std::size_t len;
};
constexpr Field kName{0, 100}, kMode{100, 8}, kUid{108, 8}, kGid{116, 8}, kSize{124, 12},
    kMtime{136, 12}, kChecksum{148, 8}, kType{156, 1}, kLink{157, 100}, kMagic{257, 6},
    kVersion{263, 2}, kPrefix{345, 155};

// value as `len - 1` octal digits and a NUL.
void put_octal(std::string& block, Field f, std::uint64_t value) {
  std::string digits(f.len - 1, '0');
  for (std::size_t i = digits.size(); i > 0 && value > 0; --i, value >>= 3) {
    digits[i - 1] = static_cast<char>('0' + (value & 7));
  }
  block.replace(f.at, digits.size(), digits);
}

void put_text(std::string& block, Field f, std::string_view text) {
  block.replace(f.at, text.size(), text);
}

std::string_view field(std::string_view block, Field f) {
  std::string_view v = block.substr(f.at, f.len);
  return v.substr(0, std::min(v.find('\0'), v.size()));
}

// Octal digits, optionally surrounded by spaces and NULs (what tars write).
std::optional<std::uint64_t> octal(std::string_view block, Field f) {
  std::string_view v = block.substr(f.at, f.len);
  std::size_t i = 0;
  while (i < v.size() && v[i] == ' ') ++i;
  std::uint64_t out = 0;
  std::size_t digits = 0;
  for (; i < v.size() && v[i] >= '0' && v[i] <= '7'; ++i, ++digits) {
    out = out * 8 + static_cast<std::uint64_t>(v[i] - '0');
  }
  for (; i < v.size(); ++i) {
    if (v[i] != ' ' && v[i] != '\0') return std::nullopt;
  }
  if (digits == 0) return std::nullopt;
  return out;
}

std::uint64_t checksum(std::string_view block) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    const bool in_field = i >= kChecksum.at && i < kChecksum.at + kChecksum.len;
    sum += in_field ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(block[i]);
  }
  return sum;
}

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

Error bad(std::string message) {
  return make_error(ErrorKind::invalid, std::move(message));
}

std::string shown(std::string_view s) {
  std::string out = "\"";
  for (char c : s.substr(0, 120)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + (s.size() > 120 ? "...\"" : "\"");
}

}  // namespace

Result<std::string> header(const Member& m) {
  std::string block(kBlock, '\0');
  std::string name = m.name + (m.kind == Kind::directory ? "/" : "");
  std::string prefix;
  if (name.size() > kName.len) {
    // Split at a "/" so that the prefix is at most 155 bytes and the rest at most 100.
    const std::size_t from = name.size() > kName.len + 1 ? name.size() - kName.len - 1 : 0;
    const std::size_t slash = name.find('/', from);
    if (slash == std::string::npos || slash > kPrefix.len || slash == 0 ||
        name.size() - slash - 1 > kName.len || slash + 1 == name.size()) {
      return bad("the path " + shown(m.name) +
                 " is too long for a ustar archive (at most 255 bytes, the last 100 after a "
                 "\"/\")");
    }
    prefix = name.substr(0, slash);
    name = name.substr(slash + 1);
  }
  if (m.link.size() > kLink.len) {
    return bad("the symlink " + shown(m.name) + " has a target of " +
               std::to_string(m.link.size()) + " bytes; a ustar archive holds at most 100");
  }
  if (m.size > kMaxSize) {
    return bad("the file " + shown(m.name) + " is over 8 GiB, more than a ustar archive holds");
  }
  put_text(block, kName, name);
  put_octal(block, kMode, m.mode & 0777);
  put_octal(block, kUid, 0);
  put_octal(block, kGid, 0);
  put_octal(block, kSize, m.kind == Kind::file ? m.size : 0);
  put_octal(block, kMtime, 0);
  block[kType.at] = m.kind == Kind::file ? '0' : m.kind == Kind::directory ? '5' : '2';
  put_text(block, kLink, m.link);
  put_text(block, kMagic, std::string_view("ustar\0", 6));
  put_text(block, kVersion, "00");
  put_text(block, kPrefix, prefix);
  std::string sum(7, '0');
  std::uint64_t value = checksum(block);
  for (std::size_t i = 6; i > 0 && value > 0; --i, value >>= 3) {
    sum[i - 1] = static_cast<char>('0' + (value & 7));
  }
  sum[6] = '\0';
  block.replace(kChecksum.at, 7, sum);
  block[kChecksum.at + 7] = ' ';
  return block;
}

std::string end_of_archive() {
  return std::string(2 * kBlock, '\0');
}

std::uint64_t padding(std::uint64_t size) {
  return (kBlock - size % kBlock) % kBlock;
}

bool is_zero_block(std::string_view block) {
  return std::all_of(block.begin(), block.end(), [](char c) { return c == '\0'; });
}

Result<Member> parse_header(std::string_view block) {
  if (block.size() != kBlock) return bad("a header block is cut short");
  const std::optional<std::uint64_t> sum = octal(block, kChecksum);
  if (!sum || *sum != checksum(block)) return bad("a header's checksum does not match");
  if (block.substr(kMagic.at, 5) != "ustar") return bad("a header is not a ustar header");
  Member m;
  std::string name(field(block, kPrefix));
  if (!name.empty()) name += "/";
  name += field(block, kName);
  const char type = block[kType.at];
  const std::optional<std::uint64_t> mode = octal(block, kMode);
  const std::optional<std::uint64_t> size = octal(block, kSize);
  if (!mode || !size) return bad("the header of " + shown(name) + " has a bad mode or size");
  if ((*mode & ~std::uint64_t{0777}) != 0) {
    return bad("the member " + shown(name) +
               " has mode bits beyond 0777 (setuid, setgid or sticky), which are refused");
  }
  m.mode = static_cast<std::uint32_t>(*mode);
  switch (type) {
    case '0':
    case '\0':
      m.kind = Kind::file;
      m.size = *size;
      break;
    case '5':
      m.kind = Kind::directory;
      if (!name.empty() && name.back() == '/') name.pop_back();
      break;
    case '2':
      m.kind = Kind::symlink;
      m.link = std::string(field(block, kLink));
      break;
    case '1':
      return bad("the member " + shown(name) + " is a hard link, which is refused");
    case '3':
    case '4':
      return bad("the member " + shown(name) + " is a device, which is refused");
    case '6':
      return bad("the member " + shown(name) + " is a fifo, which is refused");
    default:
      return bad("the member " + shown(name) + " has type " + shown(std::string(1, type)) +
                 " (an extension header or a special file); only regular files, directories "
                 "and symlinks are accepted");
  }
  if (m.kind != Kind::file && *size != 0) {
    return bad("the member " + shown(name) + " is not a regular file but has a size");
  }
  m.name = std::move(name);
  return m;
}

Result<void> check_member_name(std::string_view name) {
  if (name.empty()) return bad("a member has an empty name");
  if (name.size() > kMaxName) return bad("the member name " + shown(name) + " is too long");
  if (name.front() == '/') return bad("the member " + shown(name) + " has an absolute name");
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      return bad("the member name " + shown(name) + " holds a control character");
    }
  }
  for (std::string_view part : components(name)) {
    if (part.empty() || part == "." || part == "..") {
      return bad("the member name " + shown(name) +
                 " is not a normal relative path (an empty, \".\" or \"..\" component)");
    }
  }
  return Ok{};
}

Result<void> check_symlink_target(std::string_view name, std::string_view target) {
  const std::string out = "the symlink " + shown(name) + " -> " + shown(target);
  if (target.empty()) return bad(out + " has an empty target");
  if (target.front() == '/') return bad(out + " points out of the tree (an absolute target)");
  std::size_t ups = 0;
  bool seen_name = false;
  for (std::string_view part : components(target)) {
    if (part == "..") {
      if (seen_name) {
        return bad(out + " has \"..\" after a name; only leading \"..\" components are accepted");
      }
      ++ups;
    } else if (part.empty() || part == ".") {
      if (part.empty() && seen_name && target.back() == '/') continue;  // "dir/"
      return bad(out + " is not a normal relative path (an empty or \".\" component)");
    } else {
      seen_name = true;
    }
  }
  const std::size_t depth = components(name).size() - 1;  // directories above the link
  if (ups > depth) return bad(out + " points out of the tree");
  return Ok{};
}

}  // namespace orch::ustar
