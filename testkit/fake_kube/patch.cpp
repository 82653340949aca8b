#include "testkit/fake_kube/patch.h"

#include "testkit/fake_kube/kube_json.h"

namespace orch::fake_kube {
namespace {

using nlohmann::json;

// The media type without parameters ("application/merge-patch+json; charset=utf-8").
std::string media_type(const std::string& content_type) {
  std::string type = content_type.substr(0, content_type.find(';'));
  while (!type.empty() && type.back() == ' ') type.pop_back();
  return type;
}

json patched(const json& current, const json& patch, const std::string& type) {
  if (type == "application/merge-patch+json") {
    json out = current;
    out.merge_patch(patch);
    return out;
  }
  try {
    return current.patch(patch);
  } catch (const json::exception& e) {
    throw ApiError(400, "BadRequest", std::string("the JSON patch does not apply: ") + e.what());
  }
}

}  // namespace

json apply_patch(const json& current, const std::string& body, const std::string& content_type,
                 const std::string& resource) {
  const std::string type = media_type(content_type);
  if (type != "application/merge-patch+json" && type != "application/json-patch+json") {
    throw ApiError(415, "UnsupportedMediaType",
                   "the body of the request was in an unknown format - accepted media types "
                   "include: application/json-patch+json, application/merge-patch+json");
  }
  const json patch = json::parse(body, nullptr, false);
  if (patch.is_discarded() || (type == "application/json-patch+json" && !patch.is_array())) {
    throw ApiError(400, "BadRequest", "the body of the request is not a valid " + type);
  }
  json next = patched(current, patch, type);
  if (!next.is_object()) throw ApiError(400, "BadRequest", "the patched object is not an object");
  const std::string name = string_at(current, {"metadata", "name"});
  const std::string rv = string_at(next, {"metadata", "resourceVersion"});
  if (!rv.empty() && rv != string_at(current, {"metadata", "resourceVersion"})) {
    throw ApiError(409, "Conflict",
                   "Operation cannot be fulfilled on " + resource + " \"" + name +
                       "\": the object has been modified; please apply your changes to the "
                       "latest version and try again");
  }
  for (const char* field : {"name", "namespace"}) {
    const std::string now = string_at(next, {"metadata", field});
    if (now != string_at(current, {"metadata", field})) {
      throw ApiError(422, "Invalid",
                     resource + " \"" + name + "\" is invalid: metadata." + field +
                         ": Invalid value: \"" + now + "\": field is immutable");
    }
  }
  next["kind"] = current["kind"];
  next["apiVersion"] = current["apiVersion"];
  json& meta = next["metadata"];
  for (const char* owned : {"uid", "creationTimestamp", "resourceVersion", "deletionTimestamp"}) {
    const json& was = at_path(current, {"metadata", owned});
    if (was.is_null()) {
      meta.erase(owned);
    } else {
      meta[owned] = was;
    }
  }
  return next;
}

}  // namespace orch::fake_kube
