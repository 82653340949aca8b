// Host lists (hostlist.h): Slurm's compressed form ("alpha-n[1-3,7],gpu[001-002],login").
//
// Forms accepted, as Slurm prints them: names separated by commas outside brackets; in a name,
// any number of bracket groups, each a comma list of N or N-M (decimal, N <= M). Zero padding
// follows Slurm: the width of N ("[08-10]" -> 08 09 10, "[8-10]" -> 8 9 10). Several groups in
// one name give every combination, the leftmost varying slowest ("n[1-2]-ib[3-4]" -> n1-ib3
// n1-ib4 n2-ib3 n2-ib4). Anything else (unbalanced or nested brackets, empty names or items,
// reversed or signed ranges, blanks, more than kMaxHostListNames names) is ErrorKind::invalid.

#include "scheduler/model/hostlist.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/common/text.h"

namespace orch {
namespace {

// ErrorKind::invalid: "<what>: '<list>'".
Error malformed(std::string_view what, std::string_view list) {
  return make_error(ErrorKind::invalid, std::string(what) + ": '" + quote_line(list) + "'");
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  const std::size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

struct Range {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  std::size_t width = 0;
};

// One piece of a name: literal text, or a bracket group (a list of ranges).
struct Piece {
  std::string text;
  std::vector<Range> ranges;  // empty for literal text
};

bool is_digits(std::string_view s) {
  if (s.empty() || s.size() > 18) return false;  // 18 digits always fit in 64 bits
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::uint64_t to_number(std::string_view digits) {
  std::uint64_t v = 0;
  for (char c : digits) v = v * 10 + static_cast<std::uint64_t>(c - '0');
  return v;
}

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> out;
  for (;;) {
    const std::size_t at = s.find(',');
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s = s.substr(at + 1);
  }
}

Result<std::vector<Range>> parse_group(std::string_view group, std::string_view whole) {
  std::vector<Range> ranges;
  for (std::string_view item : split_commas(group)) {
    std::size_t dash = item.find('-');
    std::string_view lo = item.substr(0, dash);
    std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
    if (!is_digits(lo) || !is_digits(hi)) {
      return malformed("host list has a bracket item that is not N or N-M", whole);
    }
    Range r{to_number(lo), to_number(hi), lo.size()};
    if (r.lo > r.hi) return malformed("host list has a reversed range", whole);
    ranges.push_back(r);
  }
  return ranges;
}

// Appends value in decimal, zero-padded to width (no temporary string: a gang of thousands of
// nodes is expanded on every read of its attempt).
void append_padded(std::string& out, std::uint64_t value, std::size_t width) {
  char digits[24];
  const std::size_t n =
      static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, value).ptr - digits);
  if (n < width) out.append(width - n, '0');
  out.append(digits, n);
}

// Whether `digits` (which read as `value`) is how value is written at width: the same value
// with only leading zeros between them, so the same text exactly when the same length.
bool written_at_width(std::uint64_t value, std::size_t width, std::string_view digits) {
  char buf[24];
  const std::size_t n =
      static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, value).ptr - buf);
  return digits.size() == std::max(n, width);
}

// How many names the pieces describe, saturating at limit (to reserve the output).
std::size_t count_names(const std::vector<Piece>& pieces, std::size_t limit) {
  std::size_t total = 1;
  for (const Piece& piece : pieces) {
    if (piece.ranges.empty()) continue;
    std::size_t here = 0;
    for (const Range& r : piece.ranges) {
      const std::uint64_t n = r.hi - r.lo + 1;
      if (n == 0 || n > limit || here + n > limit) return limit;  // 0: the full 64-bit span
      here += static_cast<std::size_t>(n);
    }
    if (here != 0 && total > limit / here) return limit;
    total *= here;
  }
  return std::min(total, limit);
}

// Splits one name ("n[1-2]-ib[3-4]") into pieces.
Result<std::vector<Piece>> parse_name(std::string_view name, std::string_view whole) {
  std::vector<Piece> pieces;
  std::string_view rest = name;
  while (!rest.empty()) {
    std::size_t open = rest.find('[');
    std::string_view text = rest.substr(0, open);
    if (text.find(']') != std::string_view::npos) {
      return malformed("host list has a ']' without '['", whole);
    }
    if (!text.empty()) pieces.push_back(Piece{std::string(text), {}});
    if (open == std::string_view::npos) break;
    std::size_t close = rest.find(']', open);
    if (close == std::string_view::npos) {
      return malformed("host list has a '[' without ']'", whole);
    }
    std::string_view group = rest.substr(open + 1, close - open - 1);
    if (group.find('[') != std::string_view::npos) {
      return malformed("host list has nested brackets", whole);
    }
    auto ranges = parse_group(group, whole);
    if (!ranges) return ranges.error();
    pieces.push_back(Piece{{}, std::move(*ranges)});
    rest = rest.substr(close + 1);
  }
  return pieces;
}

// Appends every name the pieces describe, leftmost group varying slowest.
Result<void> expand_pieces(const std::vector<Piece>& pieces, std::size_t at, std::string& prefix,
                           std::vector<std::string>& out, std::string_view whole) {
  if (at == pieces.size()) {
    if (out.size() >= kMaxHostListNames) {
      return malformed(
          "host list expands to more than " + std::to_string(kMaxHostListNames) + " names", whole);
    }
    out.push_back(prefix);
    return Ok{};
  }
  const Piece& piece = pieces[at];
  std::size_t keep = prefix.size();
  if (piece.ranges.empty()) {
    prefix += piece.text;
    auto r = expand_pieces(pieces, at + 1, prefix, out, whole);
    prefix.resize(keep);
    return r;
  }
  for (const Range& range : piece.ranges) {
    for (std::uint64_t v = range.lo; v <= range.hi; ++v) {
      append_padded(prefix, v, range.width);
      auto r = expand_pieces(pieces, at + 1, prefix, out, whole);
      prefix.resize(keep);
      if (!r) return r;
    }
  }
  return Ok{};
}

// The top-level names: split at commas outside brackets.
Result<std::vector<std::string_view>> split_names(std::string_view list) {
  std::vector<std::string_view> names;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    char c = i < list.size() ? list[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) return malformed("host list has a ']' without '['", list);
    if (c == ',' && depth == 0) {
      std::string_view name = list.substr(start, i - start);
      if (name.empty()) return malformed("host list has an empty name", list);
      names.push_back(name);
      start = i + 1;
    }
  }
  if (depth != 0) return malformed("host list has a '[' without ']'", list);
  return names;
}

// ---- compress ----------------------------------------------------------------------------

bool writable_in_list(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f || c == ',' || c == '[' || c == ']') return false;
  }
  return true;
}

// One name as its text before a trailing number and that number's digits ("n07" -> "n", "07");
// no digits when it has no trailing number or one too long to read back as 64 bits.
struct Split {
  std::string_view prefix;
  std::string_view digits;
};

Split split_number(std::string_view name) {
  std::size_t at = name.size();
  while (at > 0 && name[at - 1] >= '0' && name[at - 1] <= '9') --at;
  if (!is_digits(name.substr(at))) return {name, {}};
  return {name.substr(0, at), name.substr(at)};
}

// Names sharing a prefix, as ranges in order: "<prefix>[<range>,<range>...]".
struct Group {
  std::string_view prefix;
  std::vector<Range> ranges;
};

void append_group(const Group& g, std::string& out) {
  if (!out.empty()) out += ',';
  out += g.prefix;
  const bool single = g.ranges.size() == 1 && g.ranges[0].lo == g.ranges[0].hi;
  if (!single) out += '[';
  for (std::size_t i = 0; i < g.ranges.size(); ++i) {
    const Range& r = g.ranges[i];
    if (i > 0) out += ',';
    append_padded(out, r.lo, r.width);
    if (r.hi != r.lo) {
      out += '-';
      append_padded(out, r.hi, r.width);
    }
  }
  if (!single) out += ']';
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view hostlist) {
  std::string_view list = trim(hostlist);
  std::vector<std::string> out;
  if (list.empty()) return out;
  for (char c : list) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) {
      return malformed("host list contains a blank or control character", hostlist);
    }
  }
  auto names = split_names(list);
  if (!names) return names.error();
  for (std::string_view name : *names) {
    auto pieces = parse_name(name, list);
    if (!pieces) return pieces.error();
    out.reserve(out.size() + count_names(*pieces, kMaxHostListNames + 1 - out.size()));
    std::string prefix;
    auto r = expand_pieces(*pieces, 0, prefix, out, list);
    if (!r) return r.error();
  }
  return out;
}

std::optional<std::string> compress_hostlist(const std::vector<std::string>& names) {
  if (names.size() > kMaxHostListNames) return std::nullopt;
  std::string out;
  std::optional<Group> open;  // the group the next name may join
  for (const std::string& name : names) {
    if (!writable_in_list(name)) return std::nullopt;
    const Split part = split_number(name);
    if (part.digits.empty()) {  // a name without a number stands alone
      if (open) append_group(*open, out);
      open.reset();
      if (!out.empty()) out += ',';
      out += name;
      continue;
    }
    const std::uint64_t value = to_number(part.digits);
    if (open && open->prefix == part.prefix) {
      Range& last = open->ranges.back();
      // It continues the last range only if that range's padding writes it back the same.
      if (value == last.hi + 1 && written_at_width(value, last.width, part.digits)) {
        last.hi = value;
      } else {
        open->ranges.push_back({value, value, part.digits.size()});
      }
      continue;
    }
    if (open) append_group(*open, out);
    open = Group{part.prefix, {{value, value, part.digits.size()}}};
  }
  if (open) append_group(*open, out);
  return out;
}

}  // namespace orch
