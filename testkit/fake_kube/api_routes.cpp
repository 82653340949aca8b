#include "testkit/fake_kube/api_routes.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "testkit/fake_kube/admission.h"
#include "testkit/fake_kube/discovery.h"
#include "testkit/fake_kube/job_controller.h"
#include "testkit/fake_kube/patch.h"
#include "testkit/fake_kube/pod_status.h"
#include "testkit/fake_kube/tables.h"

namespace orch::fake_kube {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Target {
  const ResourceInfo* info = nullptr;
  std::string ns;
  std::string name;
  std::string sub;
};

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : path) {
    if (c == '/') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// nullopt: not a resource path at all. info == nullptr: a resource path the fake does not serve.
std::optional<Target> parse_target_path(const std::string& path) {
  const auto seg = split_path(path);
  std::string group;
  std::string version = "v1";
  std::size_t at = 0;
  if (seg.size() >= 3 && seg[0] == "api" && seg[1] == "v1") {
    at = 2;
  } else if (seg.size() >= 4 && seg[0] == "apis") {
    group = seg[1];
    version = seg[2];
    at = 3;
  } else {
    return std::nullopt;
  }
  std::vector<std::string> rest(seg.begin() + static_cast<long>(at), seg.end());
  Target t;
  std::string plural;
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    if (rest.size() > 5) return t;
    t.ns = rest[1];
    plural = rest[2];
    if (rest.size() > 3) t.name = rest[3];
    if (rest.size() > 4) t.sub = rest[4];
  } else {
    if (rest.size() > 3) return t;
    plural = rest[0];
    if (rest.size() > 1) t.name = rest[1];
    if (rest.size() > 2) t.sub = rest[2];
  }
  const ResourceInfo* info = find_resource(group, plural);
  if (!info || info->version != version) return t;
  if (!info->namespaced && !t.ns.empty()) return t;
  if (info->namespaced && t.ns.empty() && !t.name.empty()) return t;
  if (!t.sub.empty() && std::find(info->subresources.begin(), info->subresources.end(), t.sub) ==
                            info->subresources.end()) {
    return t;
  }
  t.info = info;
  return t;
}

ApiError not_found(const ResourceInfo& info, const std::string& name) {
  ApiError e(404, "NotFound", info.qualified() + " \"" + name + "\" not found");
  e.details = {{"name", name}, {"group", info.group}, {"kind", info.plural}};
  return e;
}

void require_verb(const ResourceInfo& info, const std::string& verb) {
  if (std::find(info.verbs.begin(), info.verbs.end(), verb) == info.verbs.end()) {
    throw ApiError(405, "MethodNotAllowed",
                   "the server does not allow this method on the requested resource");
  }
}

bool truthy(const std::string& v) {
  return v == "1" || v == "true" || v == "True";
}

WatchFilter filter_of(const ResourceInfo& info, const std::string& ns, const Request& req) {
  WatchFilter f;
  f.resource = info.plural;
  f.ns = ns;
  f.labels = LabelSelector::parse(req.param("labelSelector"));
  f.fields = FieldSelector::parse(req.param("fieldSelector"));
  return f;
}

// What strict field validation accepts at the top level of an object of that resource.
bool known_top_level_field(const ResourceInfo& info, const std::string& key) {
  if (key == "apiVersion" || key == "kind" || key == "metadata") return true;
  if (info.plural == "secrets") {
    return key == "data" || key == "stringData" || key == "type" || key == "immutable";
  }
  return key == "spec" || key == "status";
}

json strip_type(json o) {
  o.erase("kind");
  o.erase("apiVersion");
  return o;
}

class Routes {
 public:
  Routes(ApiState& state, const Request& req, ResponseWriter& out)
      : state_(state), store_(state.cluster.store()), req_(req), out_(out) {}

  void run(const Target& t) {
    const ResourceInfo& info = *t.info;
    const std::string& m = req_.method;
    if (t.sub == "log") {
      if (m != "GET") require_verb(info, "");
      return logs(info, t.ns, t.name);
    }
    if (t.name.empty()) {
      if (m == "GET") {
        if (truthy(req_.param("watch"))) {
          require_verb(info, "watch");
          return watch(info, t.ns);
        }
        require_verb(info, "list");
        return list(info, t.ns);
      }
      if (m == "POST") {
        require_verb(info, "create");
        return create(info, t.ns);
      }
      require_verb(info, "");
    }
    if (m == "GET") {
      require_verb(info, "get");
      return get(info, t.ns, t.name);
    }
    if (m == "DELETE" && t.sub.empty()) {
      require_verb(info, "delete");
      return remove(info, t.ns, t.name);
    }
    if (m == "PATCH" && t.sub.empty()) {
      require_verb(info, "patch");
      return patch(info, t.ns, t.name);
    }
    require_verb(info, "");
  }

 private:
  json must_get(const ResourceInfo& info, const std::string& ns, const std::string& name) {
    auto o = store_.get(info.plural, ns, name);
    if (!o) throw not_found(info, name);
    return *o;
  }

  void answer_objects(const ResourceInfo& info, std::vector<json> items, const std::string& rv,
                      bool single) {
    if (wants_table(req_.header("accept"))) {
      const std::string include = req_.param("includeObject");
      return send_json(out_, 200, to_table(info.plural, items, rv, include));
    }
    if (single) return send_json(out_, 200, items.front());
    json list = {{"kind", info.kind + "List"},
                 {"apiVersion", info.group_version()},
                 {"metadata", {{"resourceVersion", rv}}},
                 {"items", json::array()}};
    for (json& o : items) list["items"].push_back(strip_type(std::move(o)));
    send_json(out_, 200, list);
  }

  void list(const ResourceInfo& info, const std::string& ns) {
    ListResult r = store_.list(filter_of(info, ns, req_));
    answer_objects(info, std::move(r.items), r.resource_version, false);
  }

  void get(const ResourceInfo& info, const std::string& ns, const std::string& name) {
    json o = must_get(info, ns, name);
    const std::string rv = string_at(o, {"metadata", "resourceVersion"});
    answer_objects(info, {std::move(o)}, rv, true);
  }

  void create(const ResourceInfo& info, const std::string& ns) {
    json object = json::parse(req_.body, nullptr, false);
    if (!object.is_object()) {
      throw ApiError(400, "BadRequest",
                     "the object provided is unrecognized (must be of type " + info.kind +
                         "): the body is not a JSON object");
    }
    const std::string kind = string_at(object, {"kind"}, info.kind);
    const std::string api_version = string_at(object, {"apiVersion"}, info.group_version());
    if (kind != info.kind || api_version != info.group_version()) {
      throw ApiError(400, "BadRequest",
                     "the API version in the data (" + api_version + ") and kind (" + kind +
                         ") do not match the request (" + info.group_version() + ", " + info.kind +
                         ")");
    }
    if (req_.param("fieldValidation") == "Strict") {
      // Only the top level: the fake has no schemas for what lies below.
      for (const auto& item : object.items()) {
        const std::string& key = item.key();
        if (!known_top_level_field(info, key)) {
          throw ApiError(400, "BadRequest",
                         kind_for_messages(info) + " in version \"" + info.version +
                             "\" cannot be handled as a " + info.kind +
                             ": strict decoding error: unknown field \"" + key + "\"");
        }
      }
    }
    object["kind"] = info.kind;
    object["apiVersion"] = info.group_version();
    json& meta = object["metadata"];
    if (!meta.is_object()) meta = json::object();
    if (info.namespaced) {
      const std::string body_ns = string_at(meta, {"namespace"});
      if (!body_ns.empty() && body_ns != ns) {
        throw ApiError(400, "BadRequest",
                       "the namespace of the provided object does not match the namespace sent "
                       "on the request");
      }
      meta["namespace"] = ns;
      if (!store_.get("namespaces", "", ns)) {
        ApiError e(404, "NotFound", "namespaces \"" + ns + "\" not found");
        e.details = {{"name", ns}, {"kind", "namespaces"}};
        throw e;
      }
    } else {
      meta.erase("namespace");
    }
    for (const char* server_owned : {"uid", "resourceVersion", "creationTimestamp",
                                     "deletionTimestamp", "deletionGracePeriodSeconds"}) {
      meta.erase(server_owned);
    }
    if (string_at(meta, {"name"}).empty() && string_at(meta, {"generateName"}).empty()) {
      ApiError e(422, "Invalid",
                 kind_for_messages(info) +
                     " \"\" is invalid: metadata.name: Required value: "
                     "name or generateName is required");
      e.details = {{"group", info.group}, {"kind", info.kind}};
      throw e;
    }
    admit(info, object);
    if (req_.param("dryRun") == "All") return send_json(out_, 201, object);
    try {
      json created = state_.cluster.locked([&] { return store_.create(info.plural, object); });
      send_json(out_, 201, created);
    } catch (ApiError& e) {
      if (e.code != 409) throw;
      const std::string name = string_at(object, {"metadata", "name"});
      ApiError exists(409, "AlreadyExists", info.qualified() + " \"" + name + "\" already exists");
      exists.details = {{"name", name}, {"group", info.group}, {"kind", info.plural}};
      throw exists;
    }
  }

  // The stored object patched (patch.h), admitted again and stored with a new resourceVersion.
  void patch(const ResourceInfo& info, const std::string& ns, const std::string& name) {
    json next = apply_patch(must_get(info, ns, name), req_.body, req_.header("content-type"),
                            info.qualified());
    admit(info, next);
    if (req_.param("dryRun") == "All") return send_json(out_, 200, next);
    auto stored = state_.cluster.locked(
        [&] { return store_.update(info.plural, ns, name, [&](json& o) { o = next; }); });
    if (!stored) throw not_found(info, name);
    send_json(out_, 200, *stored);
  }

  void remove(const ResourceInfo& info, const std::string& ns, const std::string& name) {
    json options = json::parse(req_.body.empty() ? "{}" : req_.body, nullptr, false);
    if (!options.is_object()) options = json::object();
    std::string policy = string_at(options, {"propagationPolicy"}, req_.param("propagationPolicy"));
    const json& orphan = at_path(options, {"orphanDependents"});
    if (policy.empty() && orphan.is_boolean()) policy = orphan == true ? "Orphan" : "Background";
    if (policy.empty() && req_.has_param("orphanDependents")) {
      policy = truthy(req_.param("orphanDependents")) ? "Orphan" : "Background";
    }
    if (!policy.empty() && policy != "Orphan" && policy != "Background" && policy != "Foreground") {
      throw ApiError(400, "BadRequest", "unknown propagationPolicy \"" + policy + "\"");
    }
    long long grace = int_at(options, {"gracePeriodSeconds"}, -1);
    if (grace < 0 && req_.has_param("gracePeriodSeconds")) {
      grace = parse_count(json(req_.param("gracePeriodSeconds")));
    }
    const json object = must_get(info, ns, name);
    if (req_.param("dryRun") == "All") return send_json(out_, 200, object);
    json after = state_.cluster.locked(
        [&] { return delete_object(store_, info.plural, object, policy, grace); });
    if (store_.get(info.plural, ns, name)) return send_json(out_, 200, after);
    send_json(out_, 200,
              status_success({{"name", name},
                              {"group", info.group},
                              {"kind", info.plural},
                              {"uid", string_at(object, {"metadata", "uid"})}}));
  }

  void watch(const ResourceInfo& info, const std::string& ns) {
    const WatchFilter filter = filter_of(info, ns, req_);
    long long timeout = 1800;
    if (req_.has_param("timeoutSeconds")) {
      timeout = parse_count(json(req_.param("timeoutSeconds")));
      if (timeout < 0) throw ApiError(400, "BadRequest", "invalid timeoutSeconds");
    }
    std::shared_ptr<Watcher> watcher;
    try {
      watcher = store_.watch(filter, req_.param("resourceVersion"));
    } catch (const ApiError& e) {
      if (e.code != 410 || state_.gone_as_http) throw;
      // The real API server: 200, then one ERROR event carrying the 410 Status.
      out_.begin_stream(200, "application/json");
      out_.write_chunk(json{{"type", "ERROR"}, {"object", status_failure(e)}}.dump() + "\n");
      out_.end_stream();
      return;
    }
    if (!out_.begin_stream(200, "application/json")) return;
    const auto deadline = Clock::now() + std::chrono::seconds(timeout);
    const bool table = wants_table(req_.header("accept"));
    for (;;) {
      std::vector<WatchEvent> events;
      const auto wait =
          watcher->next(events, std::min(deadline, Clock::now() + std::chrono::milliseconds(200)));
      for (const WatchEvent& e : events) {
        // `kubectl get -w` asks for Tables: each event then carries a one-row Table.
        const json object = table ? to_table(info.plural, {e.object},
                                             string_at(e.object, {"metadata", "resourceVersion"}),
                                             req_.param("includeObject"))
                                  : e.object;
        if (!out_.write_chunk(json{{"type", e.type}, {"object", object}}.dump() + "\n")) {
          watcher->close();
          return;
        }
      }
      if (wait == Watcher::Wait::closed || Clock::now() >= deadline) break;
      if (out_.client_gone()) {
        watcher->close();
        return;
      }
    }
    watcher->close();
    out_.end_stream();
  }

  void logs(const ResourceInfo& info, const std::string& ns, const std::string& name) {
    const json pod = must_get(info, ns, name);
    const json& containers = at_path(pod, {"spec", "containers"});
    const std::string first =
        containers.is_array() && !containers.empty() ? string_at(containers[0], {"name"}) : "";
    const std::string container = req_.param("container");
    if (!container.empty() && container != first) {
      throw ApiError(400, "BadRequest",
                     "container " + container + " is not valid for pod " + name +
                         " (the fake runs and logs only the first container, " + first + ")");
    }
    const json& cs = at_path(pod, {"status", "containerStatuses"});
    const json state = cs.is_array() && !cs.empty() ? cs[0]["state"] : json::object();
    if (!state.contains("running") && !state.contains("terminated")) {
      std::string why = string_at(state, {"waiting", "reason"}, "ContainerCreating");
      if (why == "ImagePullBackOff" || why == "ErrImagePull")
        why = "trying and failing to pull image";
      throw ApiError(
          400, "BadRequest",
          "container \"" + first + "\" in pod \"" + name + "\" is waiting to start: " + why);
    }
    const std::string path = state_.cluster.kubelet().log_path(pod);
    std::string text = read_from(path, 0);
    const long long tail =
        req_.has_param("tailLines") ? parse_count(json(req_.param("tailLines"))) : -1;
    if (tail >= 0) text = last_lines(text, tail);
    const long long limit =
        req_.has_param("limitBytes") ? parse_count(json(req_.param("limitBytes"))) : -1;
    if (limit >= 0 && static_cast<long long>(text.size()) > limit) {
      text.resize(static_cast<std::size_t>(limit));
    }
    if (!truthy(req_.param("follow"))) return out_.send(200, "text/plain", text);
    if (!out_.begin_stream(200, "text/plain")) return;
    out_.write_chunk(text);
    std::size_t offset = read_from(path, 0).size();
    for (;;) {
      const auto current = store_.get("pods", ns, name);
      const bool ended =
          !current || pod_terminal(*current) ||
          string_at(*current, {"metadata", "uid"}) != string_at(pod, {"metadata", "uid"});
      const std::string more = read_from(path, offset);
      offset += more.size();
      if (!more.empty() && !out_.write_chunk(more)) return;
      if (ended && more.empty()) break;
      if (out_.client_gone()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    out_.end_stream();
  }

  static std::string read_from(const std::string& path, std::size_t offset) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return "";
    in.seekg(static_cast<std::streamoff>(offset));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  static std::string last_lines(const std::string& text, long long n) {
    if (n == 0) return "";
    std::size_t end = text.size();
    if (end > 0 && text[end - 1] == '\n') --end;
    std::size_t pos = end;
    long long seen = 0;
    while (pos > 0) {
      if (text[pos - 1] == '\n' && ++seen == n) break;
      --pos;
    }
    return text.substr(pos);
  }

  ApiState& state_;
  ObjectStore& store_;
  const Request& req_;
  ResponseWriter& out_;
};

}  // namespace

void send_json(ResponseWriter& out, int status, const json& body) {
  out.send(status, "application/json", body.dump());
}

void send_error(ResponseWriter& out, const ApiError& error) {
  send_json(out, error.code, status_failure(error));
}

void send_not_found_path(ResponseWriter& out) {
  json body = status_failure(404, "NotFound", "the server could not find the requested resource");
  body["details"] = json::object();
  send_json(out, 404, body);
}

bool handle_resource(ApiState& state, const Request& request, ResponseWriter& out) {
  const auto target = parse_target_path(request.path);
  if (!target) return false;
  if (!target->info) {
    send_not_found_path(out);
    return true;
  }
  const auto& info = *target->info;
  if (auto denied = state.forbidden.check(
          rbac_verb(request.method, !target->name.empty(), truthy(request.param("watch"))),
          info.group, info.plural, target->ns, target->name)) {
    send_error(out, *denied);
    return true;
  }
  try {
    Routes(state, request, out).run(*target);
  } catch (const ApiError& e) {
    send_error(out, e);
  }
  return true;
}

}  // namespace orch::fake_kube
