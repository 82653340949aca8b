#pragma once
// Plain-text tables with aligned columns, and the small formatters the client commands use to
// turn the server's JSON values into cells. No colours: the output is meant to be piped too.

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace orch {

class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  // Missing cells print empty; control characters in a cell print as spaces.
  void add_row(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  // Columns separated by two spaces; the last column is not padded.
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// A JSON value as a cell: null or missing -> "-", strings as they are, numbers without
// trailing zeros, booleans as yes/no.
std::string cell(const nlohmann::json& value);
// obj[key] as a cell; "-" when obj is not an object or lacks key.
std::string field(const nlohmann::json& obj, const std::string& key);
// A number with at most `precision` decimals, trailing zeros dropped ("12.5", "410"); "-" for
// null or non-numbers.
std::string decimal(const nlohmann::json& value, int precision);
// A 0..1 ratio as "41.2%"; "-" for null or non-numbers.
std::string percent(const nlohmann::json& value);
// Milliseconds since the epoch as local "YYYY-MM-DD HH:MM:SS"; "-" for null or 0.
std::string timestamp(const nlohmann::json& ms);
// obj[key] when present, else null (never throws, whatever obj is).
const nlohmann::json& member(const nlohmann::json& obj, const std::string& key);
// body[key] when it is an array, or body itself when it is one; else an empty array.
const nlohmann::json& items(const nlohmann::json& body, const std::string& key);
// obj[key] when it is a string, else "".
std::string text(const nlohmann::json& obj, const std::string& key);

}  // namespace orch
