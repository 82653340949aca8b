#pragma once
// A small JSON writer for the agent, which links no JSON library: it builds one object on one
// line, escapes strings correctly (quotes, backslashes, control characters) and turns bytes that
// are not valid UTF-8 (kernel log lines can hold anything) into U+FFFD, so that every line it
// writes is valid JSON for a strict reader such as nlohmann::json.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace orch::agent {

// s as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);

// Builds a JSON object or array by appending members in order. Commas are placed for you:
//   JsonWriter w; w.begin_object(); w.key("a"); w.number(1); w.end_object(); w.str()
// No validation of nesting beyond what the caller does; the agent's few shapes are fixed.
class JsonWriter {
 public:
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  void key(std::string_view k);
  void string(std::string_view s);
  void number(std::int64_t v);
  // Finite values print with up to `decimals` digits after the point (trailing zeros kept out);
  // NaN and infinities have no JSON form and print as null, which readers treat as unknown.
  void number(double v, int decimals = 3);
  void boolean(bool v);
  void null();
  // A member whose value is unknown is left out rather than written as null.
  void member(std::string_view k, std::string_view s);
  void member(std::string_view k, const char* s) { member(k, std::string_view(s)); }
  void member(std::string_view k, std::int64_t v);
  void member(std::string_view k, int v) { member(k, static_cast<std::int64_t>(v)); }
  void member(std::string_view k, double v, int decimals = 3);
  void member_bool(std::string_view k, bool v);
  void optional_member(std::string_view k, const std::optional<std::int64_t>& v);
  void optional_member(std::string_view k, const std::optional<double>& v, int decimals = 3);
  void optional_member(std::string_view k, const std::optional<bool>& v);

  const std::string& str() const { return out_; }

 private:
  void comma();
  std::string out_;
  bool need_comma_ = false;
};

}  // namespace orch::agent
