#include "scheduler/spec/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <exception>
#include <sstream>
#include <utility>

#include "scheduler/common/utf8.h"

namespace orch::yaml {
namespace {

// Quoted, or tagged !!str: a string even when it reads like a number.
bool is_quoted(const YAML::Node& node) {
  return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
}

std::string quote(std::string_view s) {
  // Long values are cut so that one bad field cannot flood the message.
  constexpr std::size_t kMax = 60;
  std::string out = "\"";
  out.append(utf8_prefix(s, kMax));
  if (s.size() > kMax) out += "...";
  out += "\"";
  return out;
}

std::string int_rule(long long min, long long max) {
  if (max >= INT_MAX) return "an integer >= " + std::to_string(min);
  return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

std::string number_rule(NumberRange range) {
  if (std::isfinite(range.max)) {
    if (range.min_exclusive) {
      return "a number > " + format_number(range.min) + " and <= " + format_number(range.max);
    }
    return "a number from " + format_number(range.min) + " to " + format_number(range.max);
  }
  return std::string("a number ") + (range.min_exclusive ? "> " : ">= ") + format_number(range.min);
}

}  // namespace

std::string format_number(double v) {
  // The shortest text that reads back as v: 2592000 stays 2592000, 7e9 is 7e+09.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return std::to_string(v);
  return std::string(buf, end);
}

Position position_of(const YAML::Node& node) {
  YAML::Mark mark = node.Mark();
  if (mark.is_null() || mark.line < 0 || mark.column < 0) return {};
  return {mark.line + 1, mark.column + 1};
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return is_quoted(node) ? "the string " + quote(node.Scalar()) : quote(node.Scalar());
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "null";
  }
  return "null";
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rolling rows suffice for the transposition case.
  std::vector<std::size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string_view> nearest(std::string_view word,
                                        const std::vector<std::string_view>& candidates) {
  std::optional<std::string_view> best;
  std::size_t best_distance = SIZE_MAX;
  for (std::string_view c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_distance) best_distance = d, best = c;
  }
  // A typo is one or two edits on a word of reasonable length; beyond that a suggestion
  // is more confusing than the plain list of valid keys.
  std::size_t allowed = std::min<std::size_t>(2, std::max<std::size_t>(1, word.size() / 3));
  if (best && best_distance <= allowed) return best;
  return std::nullopt;
}

std::string join(const std::vector<std::string_view>& words, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i) out += separator;
    out += words[i];
  }
  return out;
}

bool is_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

bool is_env_var_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool is_non_empty(std::string_view s) {
  return !s.empty();
}

void Reader::fail(Position at, std::string_view what, std::string_view expected) {
  std::string message(what);
  message += "; expected ";
  message += expected;
  fail_raw(at, message);
}

void Reader::fail_raw(Position at, std::string_view message) {
  if (error_) return;
  error_ =
      make_error(ErrorKind::invalid, source_ + ":" + std::to_string(at.line) + ":" +
                                         std::to_string(at.column) + ": " + std::string(message));
}

std::optional<long long> scalar_to_integer(const YAML::Node& node) {
  if (!node.IsScalar() || is_quoted(node)) return std::nullopt;
  std::string_view s = node.Scalar();
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> scalar_to_number(const YAML::Node& node) {
  if (!node.IsScalar() || is_quoted(node)) return std::nullopt;
  std::string_view s = node.Scalar();
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

MapView::MapView(Reader& reader, const YAML::Node& node, std::string context,
                 std::vector<std::string_view> valid_keys, std::string_view expected_shape)
    : reader_(&reader), context_(std::move(context)), position_(position_of(node)) {
  if (node.IsNull() || !node.IsDefined()) return;
  if (!node.IsMap()) {
    reader.fail(position_, context_ + " must be a map, got " + describe(node), expected_shape);
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    Field field{"", it->first, it->second};
    if (!field.key_node.IsScalar()) {
      reader.fail(position_of(field.key_node),
                  "a key in " + context_ + " is " + describe(field.key_node),
                  "a plain key such as \"" + std::string(valid_keys.at(0)) + "\"");
      continue;
    }
    field.key = field.key_node.Scalar();
    Position at = position_of(field.key_node);
    if (std::find(valid_keys.begin(), valid_keys.end(), field.key) == valid_keys.end()) {
      std::string message = "unknown key " + quote(field.key) + " in " + context_;
      if (auto near = nearest(field.key, valid_keys)) {
        message += "; did you mean \"" + std::string(*near) + "\"?";
      } else {
        message += "; expected one of: " + join(valid_keys, ", ");
      }
      reader.fail_raw(at, message);
      continue;
    }
    if (const Field* first = find(field.key)) {
      reader.fail(at, "key " + quote(field.key) + " appears twice in " + context_,
                  "each key once (first given at line " +
                      std::to_string(position_of(first->key_node).line) + ")");
      continue;
    }
    fields_.push_back(std::move(field));
  }
}

const Field* MapView::find(std::string_view key) const {
  for (const Field& f : fields_) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

Position MapView::key_position(std::string_view key) const {
  const Field* f = find(key);
  return f ? position_of(f->key_node) : position_;
}

Position MapView::value_position(std::string_view key) const {
  const Field* f = find(key);
  if (!f) return position_;
  // yaml-cpp marks an empty value at the start of the next line, which misleads.
  if (f->value.IsNull()) return position_of(f->key_node);
  return position_of(f->value);
}

bool MapView::require(std::string_view key, std::string_view expected) {
  if (has(key)) return true;
  reader_->fail(position_, "missing required key " + quote(key) + " in " + context_, expected);
  return false;
}

void MapView::read_string(std::string_view key, std::string& out, StringRule rule,
                          std::string_view expected) {
  const Field* f = find(key);
  if (!f) return;
  if (!f->value.IsScalar() || (rule.valid && !rule.valid(f->value.Scalar()))) {
    reader_->fail(value_position(key),
                  quote(key) + " must be " + std::string(rule.must) + ", got " + describe(f->value),
                  expected);
    return;
  }
  out = f->value.Scalar();
}

void MapView::read_int(std::string_view key, int& out, long long min, long long max,
                       std::string_view expected) {
  std::optional<int> v;
  read_int(key, v, min, max, expected);
  if (v) out = *v;
}

void MapView::read_int(std::string_view key, std::optional<int>& out, long long min, long long max,
                       std::string_view expected) {
  const Field* f = find(key);
  if (!f) return;
  max = std::min<long long>(max, INT_MAX);
  auto v = scalar_to_integer(f->value);
  if (!v || *v < min || *v > max) {
    reader_->fail(value_position(key),
                  quote(key) + " must be " + int_rule(min, max) + ", got " + describe(f->value),
                  expected);
    return;
  }
  out = static_cast<int>(*v);
}

void MapView::read_bool(std::string_view key, bool& out, std::string_view expected) {
  const Field* f = find(key);
  if (!f) return;
  const YAML::Node& v = f->value;
  if (v.IsScalar() && !is_quoted(v)) {
    if (v.Scalar() == "true") {
      out = true;
      return;
    }
    if (v.Scalar() == "false") {
      out = false;
      return;
    }
  }
  reader_->fail(value_position(key), quote(key) + " must be true or false, got " + describe(v),
                expected);
}

void MapView::read_number(std::string_view key, double& out, NumberRange range,
                          std::string_view expected) {
  std::optional<double> v;
  read_number(key, v, range, expected);
  if (v) out = *v;
}

void MapView::read_number(std::string_view key, std::optional<double>& out, NumberRange range,
                          std::string_view expected) {
  const Field* f = find(key);
  if (!f) return;
  auto v = scalar_to_number(f->value);
  if (!v || *v < range.min || (range.min_exclusive && *v == range.min) || *v > range.max) {
    reader_->fail(value_position(key),
                  quote(key) + " must be " + number_rule(range) + ", got " + describe(f->value),
                  expected);
    return;
  }
  out = *v;
}

void MapView::read_string_list(std::string_view key, std::vector<std::string>& out, StringRule rule,
                               std::string_view expected) {
  const Field* f = find(key);
  if (!f || f->value.IsNull()) return;
  if (!f->value.IsSequence()) {
    reader_->fail(value_position(key), quote(key) + " must be a list, got " + describe(f->value),
                  expected);
    return;
  }
  std::vector<std::string> items;
  for (const YAML::Node& item : f->value) {
    if (!item.IsScalar() || (rule.valid && !rule.valid(item.Scalar()))) {
      reader_->fail(position_of(item),
                    "each item of " + quote(key) + " must be " + std::string(rule.must) + ", got " +
                        describe(item),
                    expected);
      return;
    }
    items.push_back(item.Scalar());
  }
  out = std::move(items);
}

void MapView::read_string_map(std::string_view key, std::map<std::string, std::string>& out,
                              StringRule key_rule, std::string_view expected) {
  const Field* f = find(key);
  if (!f || f->value.IsNull()) return;
  if (!f->value.IsMap()) {
    reader_->fail(value_position(key), quote(key) + " must be a map, got " + describe(f->value),
                  expected);
    return;
  }
  std::map<std::string, std::string> values;
  for (auto it = f->value.begin(); it != f->value.end(); ++it) {
    // Copies (cheap handles): it->first is a member of a temporary that dies with the
    // statement, so a reference to it would dangle (ASan: stack-use-after-scope).
    const YAML::Node k = it->first;
    const YAML::Node v = it->second;
    if (!k.IsScalar() || (key_rule.valid && !key_rule.valid(k.Scalar()))) {
      reader_->fail(position_of(k),
                    "a key of " + quote(key) + " must be " + std::string(key_rule.must) + ", got " +
                        describe(k),
                    expected);
      return;
    }
    if (!v.IsScalar()) {
      // Report an empty value at its key: yaml-cpp marks it on the next line.
      reader_->fail(
          v.IsNull() ? position_of(k) : position_of(v),
          quote(std::string(key) + "." + k.Scalar()) + " must be a string, got " + describe(v),
          "a plain value; write \"\" for an empty one");
      return;
    }
    if (!values.emplace(k.Scalar(), v.Scalar()).second) {
      reader_->fail(position_of(k), "key " + quote(k.Scalar()) + " appears twice in " + quote(key),
                    "each key once");
      return;
    }
  }
  out = std::move(values);
}

MapView MapView::child(std::string_view key, std::string context,
                       std::vector<std::string_view> valid_keys,
                       std::string_view expected_shape) const {
  const Field* f = find(key);
  MapView view(*reader_, f ? f->value : YAML::Node(), std::move(context), std::move(valid_keys),
               expected_shape);
  // An absent or empty section has no position of its own; point at its key or parent.
  if (!f) view.position_ = position_;
  if (f && f->value.IsNull()) view.position_ = position_of(f->key_node);
  return view;
}

}  // namespace orch::yaml
