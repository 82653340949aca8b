// See protocol_scan.h.
#include "agents/protocol_scan.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace orch::agent {
namespace {

void skip_ws(std::string_view s, size_t* i) {
  while (*i < s.size() && (s[*i] == ' ' || s[*i] == '\t')) ++*i;
}

// Where the value of the object's own `"key":` starts in a JSON object's text, or npos. Only
// keys at the top level count: a key of a nested object (`{"ranks":[{"step":119}],"step":120}`)
// or the same text inside a string is not the line's, as the server reads it
// (scheduler/model/progress_line.cpp). One pass, no allocation: the agent reads every protocol
// line a job prints.
size_t value_of(std::string_view body, std::string_view key) {
  size_t i = 0;
  skip_ws(body, &i);
  if (i >= body.size() || body[i] != '{') return std::string_view::npos;
  int depth = 0;
  for (; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '"') {
      size_t end = i + 1;  // the closing quote
      while (end < body.size() && body[end] != '"') end += body[end] == '\\' ? 2 : 1;
      if (end >= body.size()) return std::string_view::npos;
      size_t after = end + 1;
      skip_ws(body, &after);
      if (depth == 1 && after < body.size() && body[after] == ':' &&
          body.substr(i + 1, end - i - 1) == key) {
        ++after;
        skip_ws(body, &after);
        return after;
      }
      i = end;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

void append_utf8(std::string* out, unsigned cp) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool hex4(std::string_view s, size_t i, unsigned* out) {
  if (i + 4 > s.size()) return false;
  unsigned v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    char c = s[k];
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v |= static_cast<unsigned>(c - 'A' + 10);
    } else {
      return false;
    }
  }
  *out = v;
  return true;
}

// The JSON string starting at body[i] (its opening quote), unescaped; nullopt if it is not one.
std::optional<std::string> string_at(std::string_view body, size_t i) {
  if (i >= body.size() || body[i] != '"') return std::nullopt;
  std::string out;
  for (++i; i < body.size(); ++i) {
    char c = body[i];
    if (c == '"') return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= body.size()) return std::nullopt;
    switch (body[i]) {
      case '"':
      case '\\':
      case '/':
        out += body[i];
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned cp = 0;
        if (!hex4(body, i + 1, &cp)) return std::nullopt;
        i += 4;
        unsigned low = 0;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 2 < body.size() && body[i + 1] == '\\' &&
            body[i + 2] == 'u' && hex4(body, i + 3, &low) && low >= 0xDC00 && low <= 0xDFFF) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          i += 6;
        } else if (cp >= 0xD800 && cp <= 0xDFFF) {
          cp = 0xFFFD;  // a lone surrogate
        }
        append_utf8(&out, cp);
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;  // no closing quote
}

// A non-negative integer at body[i] ("12", not "12.5" or "-1"); nullopt otherwise.
std::optional<std::int64_t> integer_at(std::string_view body, size_t i) {
  std::int64_t v = 0;
  size_t start = i;
  while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
    if (v > (INT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + (body[i] - '0');
    ++i;
  }
  if (i == start) return std::nullopt;
  if (i < body.size() && (body[i] == '.' || body[i] == 'e' || body[i] == 'E')) return std::nullopt;
  return v;
}

}  // namespace

std::optional<ProtocolLine> scan_protocol_line(std::string_view line) {
  if (line.substr(0, kProgressPrefix.size()) != kProgressPrefix) return std::nullopt;
  std::string_view body = line.substr(kProgressPrefix.size());
  auto event = string_at(body, value_of(body, "event"));
  if (!event) return std::nullopt;
  ProtocolLine out;
  if (*event == "progress") {
    out.kind = ProtocolLine::Kind::progress;
  } else if (*event == "checkpoint") {
    out.kind = ProtocolLine::Kind::checkpoint;
  } else if (*event == "checkpoint_start") {
    out.kind = ProtocolLine::Kind::checkpoint_start;
  } else {
    return std::nullopt;
  }
  auto step = integer_at(body, value_of(body, "step"));
  if (!step) return std::nullopt;
  out.step = *step;
  if (out.kind != ProtocolLine::Kind::progress) {
    auto path = string_at(body, value_of(body, "path"));
    if (!path || path->empty()) return std::nullopt;
    out.path = std::move(*path);
  }
  return out;
}

void LineScanner::feed(std::string_view bytes, const Callback& on_line) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', left));
    size_t piece_len = nl ? static_cast<size_t>(nl - p) : left;
    if (!skipping_) {
      std::string_view piece(p, piece_len);
      size_t have = line_.size();
      if (have < kProgressPrefix.size()) {
        size_t k = std::min(kProgressPrefix.size() - have, piece.size());
        if (piece.substr(0, k) != kProgressPrefix.substr(have, k)) skipping_ = true;
      }
      if (!skipping_ && have + piece.size() > max_line_) skipping_ = true;
      if (skipping_) {
        line_.clear();
      } else {
        line_.append(piece);
      }
    }
    if (!nl) break;
    if (!skipping_ && line_.size() >= kProgressPrefix.size()) {
      std::string_view line = line_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      on_line(line);
    }
    line_.clear();
    skipping_ = false;
    p = nl + 1;
    left -= piece_len + 1;
  }
}

void LineScanner::finish(const Callback& on_line) {
  if (!skipping_ && line_.size() >= kProgressPrefix.size()) on_line(line_);
  line_.clear();
  skipping_ = false;
}

}  // namespace orch::agent
