#include "adapters/transfer/rsync_progress.h"

#include <cctype>
#include <charconv>
#include <vector>

namespace orch::transfer {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

std::vector<std::string_view> words_of(std::string_view s) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_blank(s[i])) ++i;
    const std::size_t start = i;
    while (i < s.size() && !is_blank(s[i])) ++i;
    if (i > start) words.push_back(s.substr(start, i - start));
  }
  return words;
}

// "32,768,000" -> 32768000. Separators (',' in the C locale, '.' or '\'' in some others) may
// only stand between digits.
std::optional<std::uint64_t> parse_count(std::string_view s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s.front())) ||
      !std::isdigit(static_cast<unsigned char>(s.back()))) {
    return std::nullopt;
  }
  std::uint64_t v = 0;
  for (char c : s) {
    if (c == ',' || c == '.' || c == '\'') continue;
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    const std::uint64_t next = v * 10 + static_cast<std::uint64_t>(c - '0');
    if (next / 10 != v) return std::nullopt;  // overflow
    v = next;
  }
  return v;
}

std::optional<int> parse_int(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// "0:00:01" or "??:??:??".
bool is_time(std::string_view s) {
  if (s.size() < 7) return false;
  int colons = 0;
  for (char c : s) {
    if (c == ':') {
      ++colons;
    } else if (!std::isdigit(static_cast<unsigned char>(c)) && c != '?') {
      return false;
    }
  }
  return colons == 2;
}

// "to-chk=3/7)" (3.1 and later) or "to-check=3/7)" (3.0).
void parse_to_check(std::string_view word, RsyncProgressLine& line) {
  for (std::string_view key : {"to-chk=", "to-check="}) {
    if (word.substr(0, key.size()) != key) continue;
    word.remove_prefix(key.size());
    if (!word.empty() && word.back() == ')') word.remove_suffix(1);
    const auto slash = word.find('/');
    if (slash == std::string_view::npos) return;
    auto left = parse_int(word.substr(0, slash));
    auto total = parse_int(word.substr(slash + 1));
    if (left && total) {
      line.files_to_check = *left;
      line.files_total = *total;
    }
  }
}

}  // namespace

std::optional<double> parse_rsync_rate(std::string_view text) {
  struct Unit {
    std::string_view suffix;
    double scale;
  };
  static constexpr Unit kUnits[] = {
      {"GB/s", 1024.0 * 1024 * 1024}, {"MB/s", 1024.0 * 1024}, {"kB/s", 1024.0}, {"B/s", 1.0}};
  for (const auto& u : kUnits) {
    if (text.size() <= u.suffix.size() || text.substr(text.size() - u.suffix.size()) != u.suffix) {
      continue;
    }
    std::string number(text.substr(0, text.size() - u.suffix.size()));
    for (auto& c : number) {
      if (c == ',') c = '.';  // a locale whose decimal point is ','
    }
    double v = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc() || end != number.data() + number.size() || v < 0) return std::nullopt;
    return v * u.scale;
  }
  return std::nullopt;
}

std::optional<RsyncProgressLine> parse_progress_line(std::string_view record) {
  const auto words = words_of(record);
  if (words.size() < 4) return std::nullopt;
  auto bytes = parse_count(words[0]);
  if (!bytes || words[1].size() < 2 || words[1].back() != '%') return std::nullopt;
  auto percent = parse_int(words[1].substr(0, words[1].size() - 1));
  auto rate = parse_rsync_rate(words[2]);
  if (!percent || *percent < 0 || *percent > 100 || !rate || !is_time(words[3])) {
    return std::nullopt;
  }
  RsyncProgressLine line;
  line.bytes = *bytes;
  line.percent = *percent;
  line.rate_bytes_per_s = *rate;
  for (std::size_t i = 4; i < words.size(); ++i) parse_to_check(words[i], line);
  return line;
}

bool RsyncProgressParser::feed(std::string_view chunk) {
  bool found = false;
  for (char c : chunk) {
    if (c != '\r' && c != '\n') {
      // A record is a terminal line; past 4 KiB it is not progress: the rest is ignored.
      if (pending_.size() < 4096) pending_.push_back(c);
      continue;
    }
    if (auto line = parse_progress_line(pending_)) {
      latest_ = *line;
      found = true;
    }
    pending_.clear();
  }
  if (auto line = parse_progress_line(pending_)) {  // the record being written
    latest_ = *line;
    found = true;
  }
  return found;
}

}  // namespace orch::transfer
