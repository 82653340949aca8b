#pragma once
// The one mechanism both spec parsers (jobs, clusters) use to read YAML: typed field readers
// that check ranges and shapes, reject unknown keys with a "did you mean", and word every
// error the same way:
//
//   <source>:<line>:<col>: <what is wrong>; expected <what was expected>
//
// A Reader keeps the first error it is told about. Parsers read every field and check
// reader.failed() once at the end, which keeps them short; the first error is the one the
// user sees, because later ones are often consequences of it. Nothing here throws.

#include <cstddef>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "scheduler/common/result.h"
#include "scheduler/common/utf8.h"

namespace orch::yaml {

// A 1-based line and column, as editors show them.
struct Position {
  int line = 1;
  int column = 1;
};

// Where a node starts (1:1 when yaml-cpp gave it no mark, e.g. an empty document).
Position position_of(const YAML::Node& node);

// How a value looks to a person, for "got ...": "\"two\"", "the string \"2\"", "a map",
// "a list", "null".
std::string describe(const YAML::Node& node);

// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` when it is close enough to be a likely typo.
std::optional<std::string_view> nearest(std::string_view word,
                                        const std::vector<std::string_view>& candidates);

// A number as a person would write it: 600, 0.5, 7e+09.
std::string format_number(double v);

std::string join(const std::vector<std::string_view>& words, std::string_view separator);

// Parses exactly one YAML (or JSON) document. Syntax errors, an empty input and several
// documents in one text come back as ErrorKind::invalid errors with a line and column, and so
// do, naming the field: invalid UTF-8 (with its byte offset in the value), a NUL byte, a tag
// other than YAML's core ones (!!str, !!int, !!float, !!bool, !!null, !!seq, !!map) and a
// quoted string whose closing quote is missing (yaml-cpp would end it at the end of the text).
Result<YAML::Node> load_document(std::string_view text, std::string_view source,
                                 std::string_view expected_shape);

// Checks applied to strings; `must` completes "\"key\" must be ...".
struct StringRule {
  bool (*valid)(std::string_view) = nullptr;
  std::string_view must;
};

bool is_name(std::string_view s);          // [A-Za-z0-9._-]{1,64}: jobs, clusters
bool is_env_var_name(std::string_view s);  // [A-Za-z_][A-Za-z0-9_]*
bool is_non_empty(std::string_view s);
inline constexpr StringRule kNonEmpty{is_non_empty, "a non-empty string"};
inline constexpr StringRule kName{is_name, "1 to 64 letters, digits, \".\", \"_\" or \"-\""};
inline constexpr StringRule kEnvVarName{
    is_env_var_name, "a variable name: a letter or \"_\", then letters, digits or \"_\""};
inline constexpr StringRule kAnyString{nullptr, "a string"};

// Bounds of a number field; the message is built from them ("a number > 0", "a number from
// 0 to 3600").
struct NumberRange {
  double min = 0.0;
  bool min_exclusive = false;
  double max = std::numeric_limits<double>::infinity();
};

class Reader {
 public:
  // The source is echoed in every message, so it is made valid UTF-8 (a file name may not be).
  explicit Reader(std::string_view source) : source_(to_valid_utf8(source)) {}

  // Records "<what>; expected <expected>" at `at`, unless an earlier error was recorded.
  void fail(Position at, std::string_view what, std::string_view expected);
  // Records a message that is already complete apart from "<source>:<line>:<col>: ".
  void fail_raw(Position at, std::string_view message);

  bool failed() const { return error_.has_value(); }
  Error error() const { return error_.value_or(make_error(ErrorKind::internal, "no error")); }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::optional<Error> error_;
};

// One key of a map as written: the key's text, the key node (for its position) and the value.
struct Field {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

// A YAML map whose keys were checked against a list of valid ones when it was opened.
// Readers leave their output untouched when the key is absent (so defaults stand) and
// record an error when the key is present but its value is wrong.
class MapView {
 public:
  // `context` names the map in messages ("resources"); a null node is an empty map.
  // Anything else that is not a map, an unknown key or a key given twice is an error.
  MapView(Reader& reader, const YAML::Node& node, std::string context,
          std::vector<std::string_view> valid_keys, std::string_view expected_shape);

  const Field* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  Position position() const { return position_; }
  Position key_position(std::string_view key) const;
  // Where a bad value is reported: the value itself, or its key when the value is empty.
  Position value_position(std::string_view key) const;
  Reader& reader() const { return *reader_; }

  // Records 'missing required key "<key>" in <context>' when the key is absent.
  bool require(std::string_view key, std::string_view expected);

  void read_string(std::string_view key, std::string& out, StringRule rule,
                   std::string_view expected);
  void read_int(std::string_view key, int& out, long long min, long long max,
                std::string_view expected);
  void read_int(std::string_view key, std::optional<int>& out, long long min, long long max,
                std::string_view expected);
  void read_number(std::string_view key, double& out, NumberRange range, std::string_view expected);
  void read_number(std::string_view key, std::optional<double>& out, NumberRange range,
                   std::string_view expected);
  // true or false (YAML 1.2 spelling only: yes/no/on/off are refused as ambiguous).
  void read_bool(std::string_view key, bool& out, std::string_view expected);
  // A list of scalars, each checked with `rule`.
  void read_string_list(std::string_view key, std::vector<std::string>& out, StringRule rule,
                        std::string_view expected);
  // A map of scalar to scalar; keys checked with `key_rule`, values taken as written.
  void read_string_map(std::string_view key, std::map<std::string, std::string>& out,
                       StringRule key_rule, std::string_view expected);

  // The map under `key` (an empty view when the key is absent).
  MapView child(std::string_view key, std::string context, std::vector<std::string_view> valid_keys,
                std::string_view expected_shape) const;

 private:
  Reader* reader_;
  std::string context_;
  Position position_;
  std::vector<Field> fields_;
};

// Reads a scalar as an integer or a finite number; nullopt when it is not one. Quoted
// scalars are strings, not numbers, so "2" in quotes is rejected: JSON clients must send 2.
std::optional<long long> scalar_to_integer(const YAML::Node& node);
std::optional<double> scalar_to_number(const YAML::Node& node);

}  // namespace orch::yaml
