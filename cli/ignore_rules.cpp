#include "cli/ignore_rules.h"

namespace orch {
namespace {

// One "[...]" set at p[0] == '['; sets `consumed` to its length (0: not a set, take "[" as
// written).
bool class_match(std::string_view p, char c, std::size_t& consumed) {
  std::size_t i = 1;
  const bool negated = i < p.size() && (p[i] == '!' || p[i] == '^');
  if (negated) ++i;
  bool matched = false;
  bool first = true;
  for (; i < p.size() && (first || p[i] != ']'); ++i, first = false) {
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      matched = matched || (c >= p[i] && c <= p[i + 2]);
      i += 2;
    } else {
      matched = matched || c == p[i];
    }
  }
  if (i >= p.size()) {
    consumed = 0;
    return false;
  }
  consumed = i + 1;
  return matched != negated && c != '/';
}

bool match_at(std::string_view p, std::string_view s) {
  while (!p.empty()) {
    if (p.substr(0, 2) == "**") {
      std::size_t stars = 0;
      while (stars < p.size() && p[stars] == '*') ++stars;
      std::string_view rest = p.substr(stars);
      if (rest.empty()) return true;  // "/**" at the end: everything inside
      if (rest.front() == '/') {
        // "**/": zero or more whole directories.
        rest.remove_prefix(1);
        for (std::size_t i = 0; i <= s.size(); ++i) {
          if ((i == 0 || s[i - 1] == '/') && match_at(rest, s.substr(i))) return true;
        }
        return false;
      }
      for (std::size_t i = 0; i <= s.size(); ++i) {
        if (match_at(rest, s.substr(i))) return true;
      }
      return false;
    }
    const char c = p.front();
    if (c == '*') {
      const std::string_view rest = p.substr(1);
      for (std::size_t i = 0; i <= s.size(); ++i) {
        if (match_at(rest, s.substr(i))) return true;
        if (i < s.size() && s[i] == '/') return false;
      }
      return false;
    }
    if (s.empty()) return false;
    if (c == '?') {
      if (s.front() == '/') return false;
      p.remove_prefix(1);
    } else if (c == '[') {
      std::size_t consumed = 0;
      const bool in = class_match(p, s.front(), consumed);
      if (consumed == 0) {
        if (s.front() != '[') return false;
        p.remove_prefix(1);
      } else {
        if (!in) return false;
        p.remove_prefix(consumed);
      }
    } else if (c == '\\' && p.size() > 1) {
      if (s.front() != p[1]) return false;
      p.remove_prefix(2);
    } else {
      if (s.front() != c) return false;
      p.remove_prefix(1);
    }
    s.remove_prefix(1);
  }
  return s.empty();
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path) {
  return match_at(pattern, path);
}

void IgnoreRules::add_file(const std::string& base, std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    while (!line.empty() && line.back() == ' ' &&
           !(line.size() > 1 && line[line.size() - 2] == '\\')) {
      line.pop_back();
    }
    if (line.empty() || line.front() == '#') continue;
    Rule rule;
    rule.base = base.empty() ? "" : base + "/";
    if (line.front() == '!') {
      rule.negate = true;
      line.erase(0, 1);
    } else if (line.front() == '\\' && line.size() > 1 && (line[1] == '#' || line[1] == '!')) {
      line.erase(0, 1);
    }
    if (!line.empty() && line.back() == '/') {
      rule.dir_only = true;
      while (!line.empty() && line.back() == '/') line.pop_back();
    }
    if (line.empty()) continue;
    rule.anchored = line.find('/') != std::string::npos;
    if (line.front() == '/') line.erase(0, 1);
    if (line.empty()) continue;
    rule.pattern = std::move(line);
    rules_.push_back(std::move(rule));
  }
}

bool IgnoreRules::ignored(const std::string& path, bool is_dir) const {
  bool out = false;
  for (const Rule& rule : rules_) {
    if (rule.negate != out) continue;  // only a rule that could change the answer matters
    if (rule.dir_only && !is_dir) continue;
    if (path.compare(0, rule.base.size(), rule.base) != 0) continue;
    const std::string_view below = std::string_view(path).substr(rule.base.size());
    bool hit = false;
    if (rule.anchored) {
      hit = glob_match(rule.pattern, below);
    } else {
      const std::size_t slash = below.rfind('/');
      hit = glob_match(rule.pattern,
                       slash == std::string_view::npos ? below : below.substr(slash + 1));
    }
    if (hit) out = !rule.negate;
  }
  return out;
}

}  // namespace orch
