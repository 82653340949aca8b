#pragma once
// Label and field selectors as the API server reads them from `?labelSelector=` and
// `?fieldSelector=`, plus the LabelSelector objects of spec.selector and node affinity terms.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace orch::fake_kube {

struct Requirement {
  enum class Op { equals, not_equals, in, not_in, exists, not_exists };
  std::string key;
  Op op = Op::equals;
  std::vector<std::string> values;
};

class LabelSelector {
 public:
  // "a=b,c!=d,e in (f,g),h notin (i),j,!k". Throws ApiError 400 BadRequest when malformed.
  static LabelSelector parse(const std::string& text);
  // spec.selector: {"matchLabels":{...},"matchExpressions":[{"key","operator","values"}]}.
  static LabelSelector from_json(const nlohmann::json& selector);
  bool matches(const nlohmann::json& labels) const;  // labels: an object or null
  bool empty() const { return requirements_.empty(); }

 private:
  std::vector<Requirement> requirements_;
};

// metadata.name, metadata.namespace, spec.nodeName, status.phase with =, == or !=.
class FieldSelector {
 public:
  static FieldSelector parse(const std::string& text);  // throws ApiError 400 when unsupported
  bool matches(const nlohmann::json& object) const;
  bool empty() const { return terms_.empty(); }

 private:
  struct Term {
    std::string field;
    bool negate = false;
    std::string value;
  };
  std::vector<Term> terms_;
};

// One nodeSelectorTerm of node affinity: matchExpressions on labels (In, NotIn, Exists,
// DoesNotExist, Gt, Lt) and matchFields on metadata.name (In, NotIn).
bool node_selector_term_matches(const nlohmann::json& term, const nlohmann::json& node);

}  // namespace orch::fake_kube
