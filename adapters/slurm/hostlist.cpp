// expand_hostlist: Slurm's compressed host lists ("alpha-n[1-3,7],gpu[001-002],login").
//
// Forms accepted, as Slurm prints them: names separated by commas outside brackets; in a name,
// any number of bracket groups, each a comma list of N or N-M (decimal, N <= M). Zero padding
// follows Slurm: the width of N ("[08-10]" -> 08 09 10, "[8-10]" -> 8 9 10). Several groups in
// one name give every combination, the leftmost varying slowest ("n[1-2]-ib[3-4]" -> n1-ib3
// n1-ib4 n2-ib3 n2-ib4). Anything else (unbalanced or nested brackets, empty names or items,
// reversed or signed ranges, blanks, more than kMaxHosts names) is ErrorKind::invalid.

#include <cstdint>
#include <string>
#include <vector>

#include "adapters/slurm/parse_util.h"
#include "adapters/slurm/slurm_parse.h"

namespace orch::slurm {
namespace {

// A bound on what one list may expand to: a typo such as "n[1-99999999]" must not eat memory.
constexpr std::size_t kMaxHosts = 1u << 16;

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

Result<std::vector<Range>> parse_group(std::string_view group, std::string_view whole) {
  std::vector<Range> ranges;
  for (std::string_view item : detail::split_all(group, ',')) {
    std::size_t dash = item.find('-');
    std::string_view lo = item.substr(0, dash);
    std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
    if (!is_digits(lo) || !is_digits(hi)) {
      return detail::malformed("host list has a bracket item that is not N or N-M", whole);
    }
    Range r{to_number(lo), to_number(hi), lo.size()};
    if (r.lo > r.hi) return detail::malformed("host list has a reversed range", whole);
    ranges.push_back(r);
  }
  return ranges;
}

std::string padded(std::uint64_t value, std::size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// Splits one name ("n[1-2]-ib[3-4]") into pieces.
Result<std::vector<Piece>> parse_name(std::string_view name, std::string_view whole) {
  std::vector<Piece> pieces;
  std::string_view rest = name;
  while (!rest.empty()) {
    std::size_t open = rest.find('[');
    std::string_view text = rest.substr(0, open);
    if (text.find(']') != std::string_view::npos) {
      return detail::malformed("host list has a ']' without '['", whole);
    }
    if (!text.empty()) pieces.push_back(Piece{std::string(text), {}});
    if (open == std::string_view::npos) break;
    std::size_t close = rest.find(']', open);
    if (close == std::string_view::npos) {
      return detail::malformed("host list has a '[' without ']'", whole);
    }
    std::string_view group = rest.substr(open + 1, close - open - 1);
    if (group.find('[') != std::string_view::npos) {
      return detail::malformed("host list has nested brackets", whole);
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
    if (out.size() >= kMaxHosts) {
      return detail::malformed(
          "host list expands to more than " + std::to_string(kMaxHosts) + " names", whole);
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
      prefix += padded(v, range.width);
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
    if (depth < 0) return detail::malformed("host list has a ']' without '['", list);
    if (c == ',' && depth == 0) {
      std::string_view name = list.substr(start, i - start);
      if (name.empty()) return detail::malformed("host list has an empty name", list);
      names.push_back(name);
      start = i + 1;
    }
  }
  if (depth != 0) return detail::malformed("host list has a '[' without ']'", list);
  return names;
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view hostlist) {
  std::string_view list = detail::trim(hostlist);
  std::vector<std::string> out;
  if (list.empty()) return out;
  for (char c : list) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) {
      return detail::malformed("host list contains a blank or control character", hostlist);
    }
  }
  auto names = split_names(list);
  if (!names) return names.error();
  for (std::string_view name : *names) {
    auto pieces = parse_name(name, list);
    if (!pieces) return pieces.error();
    std::string prefix;
    auto r = expand_pieces(*pieces, 0, prefix, out, list);
    if (!r) return r.error();
  }
  return out;
}

}  // namespace orch::slurm
