#include "readme_rule.h"

#include <cctype>
#include <fstream>
#include <vector>

namespace fs = std::filesystem;

namespace layering {
namespace {

std::string_view trim_left(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  return line;
}

bool starts_never(std::string_view line) {
  return trim_left(line).starts_with(kNeverMarker);
}

// The paragraph that starts after `first` (the text after a marker on lines[at]): the
// following lines up to a blank one, or up to a "Never includes:" line when `stop_at_never`.
std::string paragraph_from(const std::vector<std::string>& lines, size_t at, std::string first,
                           bool stop_at_never) {
  std::string text = std::move(first);
  for (size_t i = at + 1; i < lines.size(); ++i) {
    if (trim_left(lines[i]).empty()) break;
    if (stop_at_never && starts_never(lines[i])) break;
    text += " " + lines[i];
  }
  return text;
}

}  // namespace

std::string first_sentence(std::string_view text) {
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '`') quoted = !quoted;
    if (quoted || text[i] != '.') continue;
    if (i + 1 == text.size() || std::isspace(static_cast<unsigned char>(text[i + 1]))) {
      return std::string(text.substr(0, i));
    }
  }
  return std::string(text);
}

std::set<std::string> backticked(std::string_view text) {
  std::set<std::string> names;
  for (size_t open = text.find('`'); open != std::string_view::npos;) {
    const size_t close = text.find('`', open + 1);
    if (close == std::string_view::npos) break;
    if (close > open + 1) names.emplace(text.substr(open + 1, close - open - 1));
    open = text.find('`', close + 1);
  }
  return names;
}

std::optional<Rule> read_rule(const fs::path& readme, const fs::path& root) {
  std::ifstream in(readme);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  Rule rule;
  bool found = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (const size_t at = line.find(kRuleMarker); at != std::string_view::npos && !found) {
      found = true;
      const std::string rest(line.substr(at + kRuleMarker.size()));
      rule.allowed = backticked(first_sentence(paragraph_from(lines, i, rest, true)));
    } else if (starts_never(line)) {
      const std::string_view after = trim_left(line).substr(kNeverMarker.size());
      const std::string rest(after);
      for (const std::string& name :
           backticked(first_sentence(paragraph_from(lines, i, rest, false)))) {
        rule.never.insert(name.ends_with('/') ? name.substr(0, name.size() - 1) : name);
      }
    }
  }
  if (!found) return std::nullopt;
  rule.readme = fs::relative(readme, root).generic_string();
  return rule;
}

Verdict judge(const Rule& rule, const std::string& own_folder, const std::string& include) {
  for (const std::string& never : rule.never) {
    if (include == never || include.starts_with(never + "/")) return Verdict::forbidden;
  }
  const std::string folder = fs::path(include).parent_path().generic_string();
  if (folder == own_folder || rule.allowed.contains("*") || rule.allowed.contains(include) ||
      rule.allowed.contains(folder)) {
    return Verdict::allowed;
  }
  return Verdict::not_allowed;
}

}  // namespace layering
