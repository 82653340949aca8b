#include "scheduler/common/utf8.h"

#include <algorithm>

namespace orch {
namespace {

// The length of the well-formed sequence starting at text[i], or 0 when there is none
// (Unicode 15, table 3-7: the ranges of the second byte exclude overlongs, surrogates and
// code points above U+10FFFF).
std::size_t sequence_length(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 == 0xE0) {
    n = 3, lo = 0xA0;  // below: overlong
  } else if (b0 == 0xED) {
    n = 3, hi = 0x9F;  // above: surrogates
  } else if (b0 >= 0xE1 && b0 <= 0xEF) {
    n = 3;
  } else if (b0 == 0xF0) {
    n = 4, lo = 0x90;  // below: overlong
  } else if (b0 == 0xF4) {
    n = 4, hi = 0x8F;  // above: beyond U+10FFFF
  } else if (b0 >= 0xF1 && b0 <= 0xF3) {
    n = 4;
  } else {
    return 0;  // a continuation byte, C0/C1 (always overlong) or F5..FF
  }
  if (text.size() - i < n) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

std::string to_valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  // Back off over continuation bytes to the start of the sequence that was cut.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

namespace {

// Code points that must not reach a terminal or a page: C0 (tab and newline too: one line),
// DEL, C1, and the bidirectional embeddings, overrides and isolates (U+202A..U+202E,
// U+2066..U+2069) that could make the words read other than they are.
bool hidden_code_point(std::string_view seq) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(seq[k]); };
  if (seq.size() == 1) return b(0) < 0x20 || b(0) == 0x7F;
  if (seq.size() == 2) return b(0) == 0xC2 && b(1) <= 0x9F;
  if (seq.size() == 3 && b(0) == 0xE2 && b(1) == 0x80) return b(2) >= 0xAA && b(2) <= 0xAE;
  if (seq.size() == 3 && b(0) == 0xE2 && b(1) == 0x81) return b(2) >= 0xA6 && b(2) <= 0xA9;
  return false;
}

}  // namespace

std::string shown_words(std::string_view text, std::size_t max_bytes) {
  const std::string valid = to_valid_utf8(text);
  std::string out;
  out.reserve(std::min(valid.size(), max_bytes + 3));
  bool blank = false;  // a blank is owed before the next shown character
  for (std::size_t i = 0; i < valid.size();) {
    const std::size_t n = sequence_length(valid, i);
    std::string_view seq = std::string_view(valid).substr(i, n);
    i += n;
    if (seq == " " || hidden_code_point(seq)) {
      blank = true;
      continue;
    }
    if (blank && !out.empty()) out += ' ';
    blank = false;
    out.append(seq);
    if (out.size() > max_bytes) break;
  }
  if (out.size() <= max_bytes) return out;
  std::string cut(utf8_prefix(out, max_bytes >= 3 ? max_bytes - 3 : 0));
  while (!cut.empty() && cut.back() == ' ') cut.pop_back();
  return cut + "...";
}

}  // namespace orch
