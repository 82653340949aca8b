// See json_writer.h.
#include "agents/json_writer.h"

#include <cmath>
#include <cstdio>

namespace orch::agent {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one
// (overlong forms, surrogates and code points above U+10FFFF are invalid too).
size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t len = 0;
  unsigned min_cp = 0;
  unsigned cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2, min_cp = 0x80, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, min_cp = 0x800, cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, min_cp = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

std::string json_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t len = utf8_sequence_length(s, i);
      if (len == 0) {
        out += "\\ufffd";  // one replacement character per byte that is not UTF-8
        ++i;
      } else {
        out.append(s.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

void JsonWriter::comma() {
  if (need_comma_) out_ += ',';
  need_comma_ = true;
}

void JsonWriter::begin_object() {
  comma();
  out_ += '{';
  need_comma_ = false;
}

void JsonWriter::end_object() {
  out_ += '}';
  need_comma_ = true;
}

void JsonWriter::begin_array() {
  comma();
  out_ += '[';
  need_comma_ = false;
}

void JsonWriter::end_array() {
  out_ += ']';
  need_comma_ = true;
}

void JsonWriter::key(std::string_view k) {
  comma();
  out_ += json_quote(k);
  out_ += ':';
  need_comma_ = false;  // the value follows without a comma
}

void JsonWriter::string(std::string_view s) {
  comma();
  out_ += json_quote(s);
}

void JsonWriter::number(std::int64_t v) {
  comma();
  out_ += std::to_string(v);
}

void JsonWriter::number(double v, int decimals) {
  comma();
  if (!std::isfinite(v)) {
    out_ += "null";
    return;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  out_ += s;
}

void JsonWriter::boolean(bool v) {
  comma();
  out_ += v ? "true" : "false";
}

void JsonWriter::null() {
  comma();
  out_ += "null";
}

void JsonWriter::member(std::string_view k, std::string_view s) {
  key(k);
  string(s);
}

void JsonWriter::member(std::string_view k, std::int64_t v) {
  key(k);
  number(v);
}

void JsonWriter::member(std::string_view k, double v, int decimals) {
  key(k);
  number(v, decimals);
}

void JsonWriter::member_bool(std::string_view k, bool v) {
  key(k);
  boolean(v);
}

void JsonWriter::optional_member(std::string_view k, const std::optional<std::int64_t>& v) {
  if (v) member(k, *v);
}

void JsonWriter::optional_member(std::string_view k, const std::optional<double>& v, int decimals) {
  if (v && std::isfinite(*v)) member(k, *v, decimals);
}

void JsonWriter::optional_member(std::string_view k, const std::optional<bool>& v) {
  if (v) member_bool(k, *v);
}

}  // namespace orch::agent
