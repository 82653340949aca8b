#include "adapters/kubernetes/kube_status_json.h"

namespace orch::kube::detail {
namespace {

constexpr std::size_t kMaxQuoted = 200;
constexpr std::size_t kMaxWords = 1024;  // bytes of a Kubernetes message kept in a detail

}  // namespace

// Text as it may appear in an error message: at most 200 bytes, control bytes escaped.
std::string quote(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxQuoted)) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4u];
      out += kHex[u & 0xFu];
    } else {
      out += c;
    }
  }
  if (text.size() > kMaxQuoted) out += "...";
  return out;
}

std::string dump_quoted(const Json& v) {
  try {
    return quote(v.dump());
  } catch (const Json::exception&) {
    return "(unprintable)";
  }
}

const char* type_name(const Json& v) {
  return v.type_name();
}

Result<Json> parse_document(std::string_view text, const std::string& what) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return make_error(ErrorKind::invalid,
                      "Kubernetes " + what + " is not valid JSON: '" + quote(text) + "'");
  }
  if (!doc.is_object()) {
    return make_error(ErrorKind::invalid, "Kubernetes " + what + " should be a JSON object, got " +
                                              type_name(doc) + " '" + quote(text) + "'");
  }
  return doc;
}

std::string at(const std::string& prefix, std::string_view field) {
  return prefix.empty() ? std::string(field) : prefix + "." + std::string(field);
}

std::string at(const std::string& prefix, std::string_view field, std::size_t index) {
  return at(prefix, field) + "[" + std::to_string(index) + "]";
}

std::vector<KubeCondition> read_conditions(Reader& r, const Json& status, const std::string& p) {
  std::vector<KubeCondition> out;
  const Json* list = r.array(status, "conditions", at(p, "conditions"));
  if (list == nullptr) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& c = (*list)[i];
    std::string cp = at(p, "conditions", i);
    if (!c.is_object()) {
      r.fail(cp, "an object", c);
      return out;
    }
    KubeCondition k;
    k.type = r.str(c, "type", at(cp, "type"));
    k.status = r.str(c, "status", at(cp, "status"));
    k.reason = r.str(c, "reason", at(cp, "reason"));
    k.message = r.str(c, "message", at(cp, "message"));
    out.push_back(std::move(k));
  }
  return out;
}

const KubeCondition* find_condition(const std::vector<KubeCondition>& conds,
                                    std::string_view type) {
  for (const auto& c : conds) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool condition_true(const std::vector<KubeCondition>& conds, std::string_view type) {
  const KubeCondition* c = find_condition(conds, type);
  return c != nullptr && c->status == "True";
}

// metadata.name, which every object has.
std::string read_name(Reader& r, const Json& obj, const std::string& p, const Json** metadata) {
  *metadata = r.object(obj, "metadata", at(p, "metadata"));
  if (!r.ok()) return {};
  std::string name;
  if (*metadata != nullptr) name = r.str(**metadata, "name", at(p, "metadata.name"));
  if (r.ok() && name.empty()) r.fail_text(at(p, "metadata.name") + " is missing");
  return name;
}

// The items of a list document.
const Json* read_items(Reader& r, const Json& doc) {
  const Json* items = r.array(doc, "items", "items");
  if (r.ok() && items == nullptr && !doc.contains("items")) {
    r.fail_text("the list has no \"items\"");
  }
  return items;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// Kubernetes' words on one line: control characters (a termination message or a hook's stderr
// may span lines) as blanks, at most kMaxWords bytes cut at a UTF-8 boundary.
std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  if (out.size() > kMaxWords) {
    std::size_t cut = kMaxWords;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0u) == 0x80u) --cut;
    out.resize(cut);
    out += "...";
  }
  return trimmed(out);
}

// "<reason>: <message>", either may be empty.
std::string reason_and_message(const std::string& reason, const std::string& message) {
  std::string m = one_line(message);
  std::string r = one_line(reason);
  if (r.empty()) return m;
  if (m.empty()) return r;
  return r + ": " + m;
}

}  // namespace orch::kube::detail
