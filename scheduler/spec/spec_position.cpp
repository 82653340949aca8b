#include "scheduler/spec/spec_position.h"

#include <charconv>
#include <exception>
#include <string>
#include <vector>

#include "scheduler/common/utf8.h"

namespace orch {
namespace {

// "a.b[2].c" -> {"a", "b", "[2]", "c"}.
std::vector<std::string> steps_of(std::string_view path) {
  std::vector<std::string> steps;
  std::string current;
  for (char c : path) {
    if (c == '.' || c == '[') {
      if (!current.empty()) steps.push_back(current);
      current = c == '[' ? "[" : "";
      continue;
    }
    current += c;
    if (c == ']') {
      steps.push_back(current);
      current.clear();
    }
  }
  if (!current.empty()) steps.push_back(current);
  return steps;
}

// One step down from node; an undefined node when there is none.
YAML::Node step_into(const YAML::Node& node, const std::string& step) {
  if (step.front() == '[') {
    std::size_t i = 0;
    const char* begin = step.data() + 1;
    const char* end = step.data() + step.size() - 1;
    if (!node.IsSequence() || std::from_chars(begin, end, i).ec != std::errc() ||
        i >= node.size()) {
      return YAML::Node(YAML::NodeType::Undefined);
    }
    return node[i];
  }
  if (!node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == step) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool has_position(const std::string& message, std::string_view source) {
  return message.size() > source.size() && message.compare(0, source.size(), source) == 0 &&
         message[source.size()] == ':';
}

}  // namespace

std::optional<yaml::Position> position_in(std::string_view document, std::string_view path) {
  try {
    auto root = yaml::load_document(document, "document", "a map");
    if (!root) return std::nullopt;
    YAML::Node node = *root;
    for (const std::string& step : steps_of(path)) {
      node = step_into(node, step);
      if (!node.IsDefined()) return std::nullopt;
    }
    return yaml::position_of(node);
  } catch (const std::exception&) {
    return std::nullopt;  // a document the parser took always reads; this is only a hint
  }
}

Error locate_error(Error e, std::string_view document, std::string_view source) {
  if (e.where.empty() || has_position(e.message, source)) return e;
  // "priority|priority_class": the first of the keys the document has.
  std::optional<yaml::Position> at;
  std::string_view rest = e.where;
  while (!at && !rest.empty()) {
    const std::size_t bar = rest.find('|');
    at = position_in(document, rest.substr(0, bar));
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
  }
  if (!at) return e;
  e.message = to_valid_utf8(source) + ":" + std::to_string(at->line) + ":" +
              std::to_string(at->column) + ": " + e.message;
  return e;
}

}  // namespace orch
