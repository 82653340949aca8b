// Internal to orch_kube_parse: reading the API's JSON documents, shared by the kube_status_*.cpp
// files (not included elsewhere). Errors name the field's path and quote what was there.
#pragma once

#include <climits>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "adapters/kubernetes/kube_status.h"

namespace orch::kube::detail {

using Json = nlohmann::json;

// Text as it may appear in an error message: at most 200 bytes, control bytes escaped.
std::string quote(std::string_view text);
std::string dump_quoted(const Json& v);
const char* type_name(const Json& v);

// Reads fields of a parsed document, keeping the first error (with the field's path).
class Reader {
 public:
  explicit Reader(std::string what) : what_(std::move(what)) {}

  bool ok() const { return !error_.has_value(); }
  const Error& error() const { return *error_; }

  void fail(const std::string& path, std::string_view expected, const Json& got) {
    if (error_) return;
    error_ = make_error(ErrorKind::invalid, "malformed Kubernetes " + what_ + ": " + path +
                                                " should be " + std::string(expected) + ", got " +
                                                type_name(got) + " " + dump_quoted(got));
  }
  void fail_text(const std::string& message) {
    if (error_) return;
    error_ = make_error(ErrorKind::invalid, "malformed Kubernetes " + what_ + ": " + message);
  }

  // nullptr when absent or null.
  const Json* member(const Json& parent, std::string_view key) {
    if (!parent.is_object()) return nullptr;
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return nullptr;
    return &*it;
  }
  const Json* object(const Json& parent, std::string_view key, const std::string& path) {
    const Json* v = member(parent, key);
    if (v != nullptr && !v->is_object()) {
      fail(path, "an object", *v);
      return nullptr;
    }
    return v;
  }
  const Json* array(const Json& parent, std::string_view key, const std::string& path) {
    const Json* v = member(parent, key);
    if (v != nullptr && !v->is_array()) {
      fail(path, "an array", *v);
      return nullptr;
    }
    return v;
  }
  std::string str(const Json& parent, std::string_view key, const std::string& path) {
    const Json* v = member(parent, key);
    if (v == nullptr) return {};
    if (!v->is_string()) {
      fail(path, "a string", *v);
      return {};
    }
    return v->get<std::string>();
  }
  std::optional<int> integer(const Json& parent, std::string_view key, const std::string& path) {
    const Json* v = member(parent, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_integer()) {
      fail(path, "an integer", *v);
      return std::nullopt;
    }
    auto n = v->get<std::int64_t>();
    if (n < INT_MIN || n > INT_MAX) {
      fail(path, "an integer that fits 32 bits", *v);
      return std::nullopt;
    }
    return static_cast<int>(n);
  }
  bool boolean(const Json& parent, std::string_view key, const std::string& path) {
    const Json* v = member(parent, key);
    if (v == nullptr) return false;
    if (!v->is_boolean()) {
      fail(path, "true or false", *v);
      return false;
    }
    return v->get<bool>();
  }

 private:
  std::string what_;
  std::optional<Error> error_;
};

Result<Json> parse_document(std::string_view text, const std::string& what);
std::string at(const std::string& prefix, std::string_view field);
std::string at(const std::string& prefix, std::string_view field, std::size_t index);
std::vector<KubeCondition> read_conditions(Reader& r, const Json& status, const std::string& p);
const KubeCondition* find_condition(const std::vector<KubeCondition>& conds, std::string_view type);
bool condition_true(const std::vector<KubeCondition>& conds, std::string_view type);
// metadata.name, which every object has.
std::string read_name(Reader& r, const Json& obj, const std::string& p, const Json** metadata);
// The items of a list document.
const Json* read_items(Reader& r, const Json& doc);
std::string trimmed(std::string s);
// Kubernetes' words on one line: control characters (a termination message or a hook's stderr
// may span lines) as blanks, at most kMaxWords bytes cut at a UTF-8 boundary.
std::string one_line(const std::string& text);
// "<reason>: <message>", either may be empty.
std::string reason_and_message(const std::string& reason, const std::string& message);

template <typename T, typename ReadOne>
Result<std::vector<T>> parse_list(std::string_view text, const std::string& what,
                                  ReadOne read_one) {
  try {
    auto doc = parse_document(text, what);
    if (!doc) return doc.error();
    Reader r(what);
    std::vector<T> out;
    const Json* items = read_items(r, *doc);
    if (items != nullptr) {
      for (std::size_t i = 0; i < items->size() && r.ok(); ++i) {
        const Json& item = (*items)[i];
        std::string p = "items[" + std::to_string(i) + "]";
        if (!item.is_object()) {
          r.fail(p, "an object", item);
          break;
        }
        out.push_back(read_one(r, item, p));
      }
    }
    if (!r.ok()) return r.error();
    return out;
  } catch (const Json::exception& e) {
    return make_error(ErrorKind::invalid,
                      "malformed Kubernetes " + what + ": " + std::string(e.what()));
  }
}

template <typename T, typename ReadOne>
Result<T> parse_one(std::string_view text, const std::string& what, ReadOne read_one) {
  try {
    auto doc = parse_document(text, what);
    if (!doc) return doc.error();
    Reader r(what);
    T out = read_one(r, *doc, std::string());
    if (!r.ok()) return r.error();
    return out;
  } catch (const Json::exception& e) {
    return make_error(ErrorKind::invalid,
                      "malformed Kubernetes " + what + ": " + std::string(e.what()));
  }
}

}  // namespace orch::kube::detail
