// orch_kube_parse: watch events, a list's resourceVersion, and the API's Status.
#include "adapters/kubernetes/kube_status_json.h"

namespace orch::kube {
using namespace detail;
namespace {

constexpr int kHttpGone = 410;

}  // namespace

Result<WatchEvent> parse_watch_event(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.empty()) {
    return make_error(ErrorKind::invalid, "empty watch event line (skip blank lines)");
  }
  try {
    auto doc = parse_document(line, "watch event");
    if (!doc) return doc.error();
    Reader r("watch event");
    WatchEvent ev;
    std::string type = r.str(*doc, "type", "type");
    const Json* obj = r.object(*doc, "object", "object");
    if (!r.ok()) return r.error();
    static const std::pair<std::string_view, WatchEventType> kTypes[] = {
        {"ADDED", WatchEventType::added},       {"MODIFIED", WatchEventType::modified},
        {"DELETED", WatchEventType::deleted},   {"ERROR", WatchEventType::error},
        {"BOOKMARK", WatchEventType::bookmark},
    };
    bool known = false;
    for (const auto& [name, value] : kTypes) {
      if (name == type) {
        ev.type = value;
        known = true;
      }
    }
    if (!known) {
      return make_error(ErrorKind::invalid, "watch event of unknown type '" + quote(type) +
                                                "' (expected ADDED, MODIFIED, DELETED, ERROR or "
                                                "BOOKMARK): '" +
                                                quote(line) + "'");
    }
    if (obj == nullptr) {
      return make_error(ErrorKind::invalid,
                        "watch event without an \"object\": '" + quote(line) + "'");
    }
    ev.object = obj->dump();
    ev.kind = r.str(*obj, "kind", "object.kind");
    if (ev.type == WatchEventType::error) {
      ApiStatus st;
      st.code = r.integer(*obj, "code", "object.code").value_or(0);
      st.reason = r.str(*obj, "reason", "object.reason");
      st.message = r.str(*obj, "message", "object.message");
      if (!r.ok()) return r.error();
      ev.gone = st.code == kHttpGone || st.reason == "Expired" || st.reason == "Gone";
      ev.status = st;
      return ev;
    }
    const Json* metadata = r.object(*obj, "metadata", "object.metadata");
    if (metadata != nullptr) {
      ev.name = r.str(*metadata, "name", "object.metadata.name");
      ev.resource_version = r.str(*metadata, "resourceVersion", "object.metadata.resourceVersion");
    }
    if (!r.ok()) return r.error();
    if (ev.type == WatchEventType::bookmark && ev.resource_version.empty()) {
      return make_error(ErrorKind::invalid,
                        "BOOKMARK watch event without a resourceVersion: '" + quote(line) + "'");
    }
    return ev;
  } catch (const Json::exception& e) {
    return make_error(ErrorKind::invalid, "malformed watch event: " + std::string(e.what()));
  }
}

Result<std::string> parse_list_resource_version(std::string_view json) {
  try {
    auto doc = parse_document(json, "list");
    if (!doc) return doc.error();
    Reader r("list");
    const Json* metadata = r.object(*doc, "metadata", "metadata");
    std::string rv;
    if (metadata != nullptr) rv = r.str(*metadata, "resourceVersion", "metadata.resourceVersion");
    if (!r.ok()) return r.error();
    if (rv.empty()) {
      return make_error(ErrorKind::invalid,
                        "Kubernetes list without metadata.resourceVersion: '" + quote(json) + "'");
    }
    return rv;
  } catch (const Json::exception& e) {
    return make_error(ErrorKind::invalid, "malformed Kubernetes list: " + std::string(e.what()));
  }
}

Result<ApiStatus> parse_api_status(std::string_view json) {
  try {
    auto doc = parse_document(json, "Status");
    if (!doc) return doc.error();
    Reader r("Status");
    std::string kind = r.str(*doc, "kind", "kind");
    ApiStatus st;
    st.code = r.integer(*doc, "code", "code").value_or(0);
    st.reason = r.str(*doc, "reason", "reason");
    st.message = r.str(*doc, "message", "message");
    if (!r.ok()) return r.error();
    if (kind != "Status") {
      return make_error(ErrorKind::invalid, "expected a Kubernetes Status, got kind '" +
                                                quote(kind) + "': '" + quote(json) + "'");
    }
    return st;
  } catch (const Json::exception& e) {
    return make_error(ErrorKind::invalid, "malformed Kubernetes Status: " + std::string(e.what()));
  }
}

}  // namespace orch::kube
