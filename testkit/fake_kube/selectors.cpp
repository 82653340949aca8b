#include "testkit/fake_kube/selectors.h"

#include <algorithm>
#include <cctype>

#include "testkit/fake_kube/kube_json.h"

namespace orch::fake_kube {
namespace {

using Op = Requirement::Op;

std::string trim(const std::string& s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

[[noreturn]] void bad_selector(const std::string& text, const std::string& why) {
  throw ApiError(400, "BadRequest",
                 "unable to parse requirement: invalid selector \"" + text + "\": " + why);
}

// Splits on commas that are not inside parentheses.
std::vector<std::string> split_terms(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty() || !out.empty()) out.push_back(trim(cur));
  return out;
}

std::vector<std::string> parse_set(const std::string& text, const std::string& whole) {
  const std::string t = trim(text);
  if (t.size() < 2 || t.front() != '(' || t.back() != ')') bad_selector(whole, "expected (a,b)");
  std::vector<std::string> values;
  std::string cur;
  for (char c : t.substr(1, t.size() - 2)) {
    if (c == ',') {
      values.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  values.push_back(trim(cur));
  return values;
}

Requirement parse_requirement(const std::string& term, const std::string& whole) {
  Requirement r;
  if (term.empty()) bad_selector(whole, "empty requirement");
  if (term.front() == '!') {
    r.key = trim(term.substr(1));
    r.op = Op::not_exists;
    return r;
  }
  for (const auto& [word, op] : {std::pair{" notin ", Op::not_in}, std::pair{" in ", Op::in}}) {
    const auto at = term.find(word);
    if (at != std::string::npos) {
      r.key = trim(term.substr(0, at));
      r.op = op;
      r.values = parse_set(term.substr(at + std::string(word).size()), whole);
      return r;
    }
  }
  for (const auto& [token, op] :
       {std::pair{"!=", Op::not_equals}, std::pair{"==", Op::equals}, std::pair{"=", Op::equals}}) {
    const auto at = term.find(token);
    if (at != std::string::npos) {
      r.key = trim(term.substr(0, at));
      r.op = op;
      r.values = {trim(term.substr(at + std::string(token).size()))};
      if (r.key.empty()) bad_selector(whole, "empty key");
      return r;
    }
  }
  r.key = trim(term);
  r.op = Op::exists;
  return r;
}

bool requirement_matches(const Requirement& r, const nlohmann::json& labels) {
  const bool has = labels.is_object() && labels.contains(r.key) && labels[r.key].is_string();
  const std::string value = has ? labels[r.key].get<std::string>() : "";
  const bool in_values =
      has && std::find(r.values.begin(), r.values.end(), value) != r.values.end();
  switch (r.op) {
    case Op::equals:
    case Op::in:
      return in_values;
    case Op::not_equals:
    case Op::not_in:
      return !in_values;
    case Op::exists:
      return has;
    case Op::not_exists:
      return !has;
  }
  return false;
}

}  // namespace

LabelSelector LabelSelector::parse(const std::string& text) {
  LabelSelector s;
  for (const std::string& term : split_terms(text)) {
    s.requirements_.push_back(parse_requirement(term, text));
  }
  return s;
}

LabelSelector LabelSelector::from_json(const nlohmann::json& selector) {
  LabelSelector s;
  if (!selector.is_object()) return s;
  if (selector.contains("matchLabels") && selector["matchLabels"].is_object()) {
    for (const auto& [k, v] : selector["matchLabels"].items()) {
      s.requirements_.push_back({k, Op::equals, {v.is_string() ? v.get<std::string>() : ""}});
    }
  }
  if (selector.contains("matchExpressions") && selector["matchExpressions"].is_array()) {
    for (const auto& e : selector["matchExpressions"]) {
      Requirement r;
      r.key = string_at(e, {"key"});
      const std::string op = string_at(e, {"operator"});
      r.op = op == "In"       ? Op::in
             : op == "NotIn"  ? Op::not_in
             : op == "Exists" ? Op::exists
                              : Op::not_exists;
      if (e.contains("values") && e["values"].is_array()) {
        for (const auto& v : e["values"]) {
          if (v.is_string()) r.values.push_back(v.get<std::string>());
        }
      }
      s.requirements_.push_back(std::move(r));
    }
  }
  return s;
}

bool LabelSelector::matches(const nlohmann::json& labels) const {
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const Requirement& r) { return requirement_matches(r, labels); });
}

FieldSelector FieldSelector::parse(const std::string& text) {
  FieldSelector s;
  for (const std::string& term : split_terms(text)) {
    Term t;
    auto at = term.find("!=");
    std::size_t skip = 2;
    if (at != std::string::npos) {
      t.negate = true;
    } else if ((at = term.find("==")) == std::string::npos) {
      at = term.find('=');
      skip = 1;
    }
    if (at == std::string::npos) {
      throw ApiError(400, "BadRequest", "invalid field selector \"" + text + "\"");
    }
    t.field = trim(term.substr(0, at));
    t.value = trim(term.substr(at + skip));
    static const char* const kKnown[] = {"metadata.name", "metadata.namespace", "spec.nodeName",
                                         "status.phase"};
    if (std::find(std::begin(kKnown), std::end(kKnown), t.field) == std::end(kKnown)) {
      throw ApiError(400, "BadRequest",
                     "field label not supported: " + t.field +
                         " (the fake serves metadata.name, metadata.namespace, spec.nodeName and "
                         "status.phase)");
    }
    s.terms_.push_back(std::move(t));
  }
  return s;
}

bool FieldSelector::matches(const nlohmann::json& object) const {
  return std::all_of(terms_.begin(), terms_.end(), [&](const Term& t) {
    const auto dot = t.field.find('.');
    const std::string a = t.field.substr(0, dot);
    const std::string b = t.field.substr(dot + 1);
    const bool equal = string_at(object, {a.c_str(), b.c_str()}) == t.value;
    return equal != t.negate;
  });
}

bool node_selector_term_matches(const nlohmann::json& term, const nlohmann::json& node) {
  const nlohmann::json& labels = at_path(node, {"metadata", "labels"});
  const nlohmann::json& exprs = at_path(term, {"matchExpressions"});
  if (exprs.is_array()) {
    for (const auto& e : exprs) {
      const std::string op = string_at(e, {"operator"});
      const std::string key = string_at(e, {"key"});
      if (op == "Gt" || op == "Lt") {
        const std::string have = string_at(labels, {key.c_str()});
        const auto& values = at_path(e, {"values"});
        if (have.empty() || !values.is_array() || values.empty()) return false;
        try {
          const long long h = std::stoll(have);
          const long long v = std::stoll(values[0].get<std::string>());
          if (op == "Gt" ? !(h > v) : !(h < v)) return false;
        } catch (...) {
          return false;
        }
        continue;
      }
      nlohmann::json one = {{"matchExpressions", nlohmann::json::array({e})}};
      if (!LabelSelector::from_json(one).matches(labels)) return false;
    }
  }
  const nlohmann::json& fields = at_path(term, {"matchFields"});
  if (fields.is_array()) {
    const nlohmann::json name_label = {{"metadata.name", string_at(node, {"metadata", "name"})}};
    nlohmann::json wrapped = {{"matchExpressions", fields}};
    if (!LabelSelector::from_json(wrapped).matches(name_label)) return false;
  }
  // A term without any requirement matches nothing.
  return (exprs.is_array() && !exprs.empty()) || (fields.is_array() && !fields.empty());
}

}  // namespace orch::fake_kube
