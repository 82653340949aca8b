#pragma once
// The text helpers every folder used to write for itself: joining words, the first line of a
// command's output for an error message, a path's "~/". Header-only, so that the statically
// linked agent can use them without linking a project library.

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch {

// Bytes as lowercase hex, two digits each (digests, random tokens).
inline std::string to_hex(const unsigned char* data, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 0xf];
  }
  return out;
}

// "a, b, c" (or with another separator).
inline std::string join(const std::vector<std::string>& items, std::string_view separator = ", ") {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

// The non-empty pieces of text between separators: "a,,b," -> {"a", "b"}.
inline std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// A line as an error message may quote it: at most 200 bytes (then "..."), control bytes as
// \xNN, so that what a remote system printed cannot garble the message.
inline std::string quote_line(std::string_view line) {
  constexpr std::size_t kMax = 200;
  constexpr std::string_view kHex = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < line.size() && i < kMax; ++i) {
    auto c = static_cast<unsigned char>(line[i]);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (line.size() > kMax) out += "...";
  return out;
}

// The first line of text without its trailing CR and blanks, cut to max_chars with "..."
// (what an error message quotes of a command's output).
inline std::string first_line(std::string_view text, std::size_t max_chars = 300) {
  std::string s(text.substr(0, text.find('\n')));
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s.size() > max_chars ? s.substr(0, max_chars) + "..." : s;
}

// "~" or "~/x" -> "$HOME" or "$HOME/x"; any other path as it is. none when the path starts
// with "~" and HOME is unset or empty (the caller says what it needed it for).
inline std::optional<std::string> expand_home(const std::string& path) {
  if (path != "~" && path.rfind("~/", 0) != 0) return path;
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return std::nullopt;
  return std::string(home) + path.substr(1);
}

// The same, keeping the path as it is when HOME is unset (a later open names the path).
inline std::string home_expanded(const std::string& path) {
  return expand_home(path).value_or(path);
}

}  // namespace orch
