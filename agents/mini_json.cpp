// See mini_json.h.
#include "agents/mini_json.h"

#include <cmath>
#include <cstdlib>

namespace orch::agent {
namespace {

constexpr int kMaxDepth = 64;

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  std::optional<JsonValue> document(std::string* error) {
    JsonValue v;
    if (!value(&v, 0)) {
      *error = why_ + " at byte " + std::to_string(i_);
      return std::nullopt;
    }
    space();
    if (i_ != s_.size()) {
      *error = "unexpected text after the value at byte " + std::to_string(i_);
      return std::nullopt;
    }
    return v;
  }

 private:
  bool fail(const char* why) {
    why_ = why;
    return false;
  }
  void space() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return fail("unknown literal");
    i_ += word.size();
    return true;
  }

  bool value(JsonValue* v, int depth) {
    if (depth > kMaxDepth) return fail("nested deeper than 64 levels");
    space();
    if (i_ >= s_.size()) return fail("unexpected end");
    char c = s_[i_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v->kind = JsonValue::Kind::kString;
      return string(&v->string);
    }
    if (c == 't' || c == 'f') {
      v->kind = JsonValue::Kind::kBool;
      v->boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') return literal("null");
    return number(v);
  }

  bool object(JsonValue* v, int depth) {
    v->kind = JsonValue::Kind::kObject;
    ++i_;
    space();
    if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
    for (;;) {
      space();
      std::string key;
      if (i_ >= s_.size() || s_[i_] != '"') return fail("expected a member name");
      if (!string(&key)) return false;
      space();
      if (i_ >= s_.size() || s_[i_] != ':') return fail("expected ':'");
      ++i_;
      JsonValue member;
      if (!value(&member, depth + 1)) return false;
      v->members.emplace_back(std::move(key), std::move(member));
      space();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
      return fail("expected ',' or '}'");
    }
  }

  bool array(JsonValue* v, int depth) {
    v->kind = JsonValue::Kind::kArray;
    ++i_;
    space();
    if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
    for (;;) {
      JsonValue item;
      if (!value(&item, depth + 1)) return false;
      v->items.push_back(std::move(item));
      space();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
      return fail("expected ',' or ']'");
    }
  }

  static void utf8(std::string* out, unsigned cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool string(std::string* out) {
    ++i_;  // the opening quote
    while (i_ < s_.size()) {
      char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in a string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (i_ >= s_.size()) break;
      char e = s_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          if (i_ + 4 > s_.size()) return fail("short \\u escape");
          unsigned cp = 0;
          for (int k = 0; k < 4; ++k) {
            char h = s_[i_++];
            cp <<= 4;
            if (h >= '0' && h <= '9')
              cp |= h - '0';
            else if (h >= 'a' && h <= 'f')
              cp |= h - 'a' + 10;
            else if (h >= 'A' && h <= 'F')
              cp |= h - 'A' + 10;
            else
              return fail("bad \\u escape");
          }
          utf8(out, cp);  // a surrogate half stays as its own (replacement-worthy) code
          break;
        }
        default:
          return fail("bad escape");
      }
    }
    return fail("unterminated string");
  }

  bool number(JsonValue* v) {
    size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && ((s_[i_] >= '0' && s_[i_] <= '9') || s_[i_] == '.' || s_[i_] == 'e' ||
                              s_[i_] == 'E' || s_[i_] == '+' || s_[i_] == '-')) {
      ++i_;
    }
    if (i_ == start) return fail("unexpected character");
    std::string text(s_.substr(start, i_ - start));
    char* end = nullptr;
    double d = std::strtod(text.c_str(), &end);
    if (*end != '\0' || !std::isfinite(d)) return fail("bad number");
    v->kind = JsonValue::Kind::kNumber;
    v->number = d;
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string why_;
};

}  // namespace

JsonValue::JsonValue() = default;
JsonValue::JsonValue(const JsonValue&) = default;
JsonValue::JsonValue(JsonValue&&) noexcept = default;
JsonValue& JsonValue::operator=(const JsonValue&) = default;
JsonValue& JsonValue::operator=(JsonValue&&) noexcept = default;
JsonValue::~JsonValue() = default;

const JsonValue* JsonValue::get(std::string_view key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<JsonValue> parse_json(std::string_view text, std::string* error) {
  return Reader(text).document(error);
}

}  // namespace orch::agent
