#include "adapters/slurm/parse_util.h"

#include <charconv>

namespace orch::slurm::detail {

std::vector<std::string_view> non_blank_lines(std::string_view output) {
  std::vector<std::string_view> lines;
  while (!output.empty()) {
    std::size_t nl = output.find('\n');
    std::string_view line = output.substr(0, nl);
    output = nl == std::string_view::npos ? std::string_view{} : output.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!trim(line).empty()) lines.push_back(line);
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  std::size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  std::size_t e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split_first(std::string_view line, char sep, std::size_t fields) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < fields) {
    std::size_t at = line.find(sep);
    if (at == std::string_view::npos) break;
    out.push_back(line.substr(0, at));
    line = line.substr(at + 1);
  }
  out.push_back(line);
  return out;
}

std::vector<std::string_view> split_all(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    std::size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s = s.substr(at + 1);
  }
}

std::optional<int> parse_count(std::string_view s) {
  if (s.empty()) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return value;
}

Error malformed(std::string_view what, std::string_view line) {
  return make_error(ErrorKind::invalid, std::string(what) + ": '" + quote_line(line) + "'");
}

std::optional<CodeAndSignal> parse_exit_code(std::string_view s) {
  auto parts = split_all(s, ':');
  if (parts.size() != 2) return std::nullopt;
  auto code = parse_count(parts[0]);
  auto signal = parse_count(parts[1]);
  if (!code || !signal) return std::nullopt;
  return CodeAndSignal{*code, *signal};
}

bool is_job_id(std::string_view s) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  for (char c : s) {
    bool ok = (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '[' || c == ']' || c == '-' ||
              c == ',' || c == '%' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool is_state_word(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'A' && c <= 'Z') || c == '_')) return false;
  }
  return true;
}

std::string_view base_state(std::string_view s) {
  return s.substr(0, s.find_first_of(" +,"));
}

std::string shortest_number(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(value);
}

}  // namespace orch::slurm::detail
