#pragma once
// A small JSON reader for the agent, which links no JSON library: enough to read a tool's
// report (dcgmi diag -j). Strict about structure, bounded (64 levels of nesting), never throws.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace orch::agent {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  // Declared here, defined in the .cpp where JsonValue is complete: clang with libstdc++ 12
  // refuses the implicit ones over the vectors of this (here still incomplete) type.
  JsonValue();
  JsonValue(const JsonValue&);
  JsonValue(JsonValue&&) noexcept;
  JsonValue& operator=(const JsonValue&);
  JsonValue& operator=(JsonValue&&) noexcept;
  ~JsonValue();
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;  // \u escapes outside ASCII become UTF-8
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;  // in document order

  bool is_object() const { return kind == Kind::kObject; }
  bool is_array() const { return kind == Kind::kArray; }
  bool is_string() const { return kind == Kind::kString; }
  bool is_number() const { return kind == Kind::kNumber; }
  // The first member named `key` of an object, or nullptr.
  const JsonValue* get(std::string_view key) const;
};

// Parses one JSON value that makes up all of `text` (whitespace around it allowed). On failure
// returns nullopt and sets *error to what is wrong and where (a byte offset).
std::optional<JsonValue> parse_json(std::string_view text, std::string* error);

}  // namespace orch::agent
