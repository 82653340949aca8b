#include "testkit/fake_kube/discovery.h"

#include <utility>

namespace orch::fake_kube {
namespace {

using nlohmann::json;

constexpr const char* kAggregatedType =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

// `kubectl get all`: the workloads, never Secrets (as in Kubernetes).
bool in_category_all(const ResourceInfo& r) {
  return r.namespaced && r.plural != "namespaces" && r.plural != "secrets" &&
         r.plural != "persistentvolumeclaims" && r.plural != "workloads";
}

json legacy_resource_list(const std::string& group_version) {
  json resources = json::array();
  for (const ResourceInfo& r : served_resources()) {
    if (r.group_version() != group_version) continue;
    json entry = {{"name", r.plural},
                  {"singularName", r.singular},
                  {"namespaced", r.namespaced},
                  {"kind", r.kind},
                  {"verbs", r.verbs}};
    if (!r.short_names.empty()) entry["shortNames"] = r.short_names;
    if (in_category_all(r) && r.plural != "services") entry["categories"] = json::array({"all"});
    resources.push_back(entry);
    for (const std::string& sub : r.subresources) {
      resources.push_back({{"name", r.plural + "/" + sub},
                           {"singularName", ""},
                           {"namespaced", r.namespaced},
                           {"kind", r.kind},
                           {"verbs", json::array({"get"})}});
    }
  }
  json out = {
      {"kind", "APIResourceList"}, {"groupVersion", group_version}, {"resources", resources}};
  if (group_version != "v1") out["apiVersion"] = "v1";
  return out;
}

// The API groups besides the core one, in the order they are served, with their version.
std::vector<std::pair<std::string, std::string>> api_groups() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ResourceInfo& r : served_resources()) {
    if (r.group.empty()) continue;
    bool known = false;
    for (const auto& g : out) known = known || g.first == r.group;
    if (!known) out.emplace_back(r.group, r.version);
  }
  return out;
}

json aggregated_group(const std::string& group_name, const std::string& version) {
  json resources = json::array();
  for (const ResourceInfo& r : served_resources()) {
    if (r.group != group_name) continue;
    const json kind = {{"group", r.group}, {"version", r.version}, {"kind", r.kind}};
    json entry = {{"resource", r.plural},
                  {"responseKind", kind},
                  {"scope", r.namespaced ? "Namespaced" : "Cluster"},
                  {"singularResource", r.singular},
                  {"verbs", r.verbs}};
    if (!r.short_names.empty()) entry["shortNames"] = r.short_names;
    if (in_category_all(r)) entry["categories"] = json::array({"all"});
    json subs = json::array();
    for (const std::string& sub : r.subresources) {
      subs.push_back({{"subresource", sub}, {"responseKind", kind}, {"verbs", {"get"}}});
    }
    if (!subs.empty()) entry["subresources"] = subs;
    resources.push_back(entry);
  }
  json group = {
      {"metadata", {{"creationTimestamp", nullptr}}},
      {"versions",
       json::array({{{"version", version}, {"resources", resources}, {"freshness", "Current"}}})}};
  if (!group_name.empty()) group["metadata"]["name"] = group_name;
  return group;
}

json aggregated_list(bool core) {
  json items = json::array();
  if (core) {
    items.push_back(aggregated_group("", "v1"));
  } else {
    for (const auto& [name, version] : api_groups()) {
      items.push_back(aggregated_group(name, version));
    }
  }
  return {{"kind", "APIGroupDiscoveryList"},
          {"apiVersion", "apidiscovery.k8s.io/v2"},
          {"metadata", json::object()},
          {"items", items}};
}

json api_group(const std::string& name, const std::string& version) {
  const json v = {{"groupVersion", name + "/" + version}, {"version", version}};
  return {{"name", name}, {"versions", json::array({v})}, {"preferredVersion", v}};
}

bool wants_aggregated(const std::string& accept) {
  // Only the v2 form; a client that asks for v2beta1 alone gets the legacy documents.
  return accept.find("as=APIGroupDiscoveryList") != std::string::npos &&
         accept.find("v=v2;") != std::string::npos;
}

DiscoveryAnswer ok(const json& body, const std::string& type = "application/json") {
  return {200, type, body.dump()};
}

// kubectl create/apply (default --validate=strict) asks OpenAPI v3 whether the server takes
// ?fieldValidation= on the kind's PATCH operation; when it does, kubectl leaves validation to
// the server and skips the client-side schema check (which would need the full schemas).
// These documents answer exactly that question and nothing more.
constexpr const char* kOpenApiHash = "FAKEKUBE0001";

json openapi_v3_root() {
  json paths = json::object();
  std::vector<std::string> gvs = {"api/v1"};
  for (const auto& [name, version] : api_groups()) gvs.push_back("apis/" + name + "/" + version);
  for (const std::string& gv : gvs) {
    paths[gv] = {{"serverRelativeURL", "/openapi/v3/" + gv + "?hash=" + kOpenApiHash}};
  }
  return {{"paths", paths}};
}

json openapi_v3_group(const std::string& group) {
  json paths = json::object();
  for (const ResourceInfo& r : served_resources()) {
    if (r.group != group) continue;
    const std::string prefix =
        group.empty() ? "/api/v1/" : "/apis/" + group + "/" + r.version + "/";
    const std::string path =
        prefix + (r.namespaced ? "namespaces/{namespace}/" : "") + r.plural + "/{name}";
    const json query = {{"in", "query"}, {"schema", {{"type", "string"}, {"uniqueItems", true}}}};
    json params = json::array();
    for (const char* name : {"dryRun", "fieldManager", "fieldValidation", "force"}) {
      json p = query;
      p["name"] = name;
      params.push_back(p);
    }
    paths[path] = {{"patch",
                    {{"operationId", "patch" + r.kind},
                     {"parameters", params},
                     {"responses", {{"200", {{"description", "OK"}}}}},
                     {"x-kubernetes-action", "patch"},
                     {"x-kubernetes-group-version-kind",
                      {{"group", r.group}, {"version", r.version}, {"kind", r.kind}}}}}};
  }
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes (fake)"}, {"version", "v1.32.0"}}},
          {"paths", paths},
          {"components", {{"schemas", json::object()}}}};
}

}  // namespace

const std::vector<ResourceInfo>& served_resources() {
  static const std::vector<ResourceInfo> kResources = {
      {"",
       "v1",
       "namespaces",
       "namespace",
       "Namespace",
       false,
       {"create", "delete", "get", "list", "watch"},
       {"ns"},
       {}},
      {"", "v1", "nodes", "node", "Node", false, {"get", "list", "watch"}, {"no"}, {}},
      {"",
       "v1",
       "pods",
       "pod",
       "Pod",
       true,
       {"create", "delete", "get", "list", "watch"},
       {"po"},
       {"log"}},
      {"",
       "v1",
       "secrets",
       "secret",
       "Secret",
       true,
       {"create", "delete", "get", "list", "patch", "watch"},
       {},
       {}},
      {"",
       "v1",
       "services",
       "service",
       "Service",
       true,
       {"create", "delete", "get", "list", "watch"},
       {"svc"},
       {}},
      // Claims (issue 44): stored for their accessModes (`cluster check`); a pod's claim
      // volume needs none (pod_volumes.h).
      {"",
       "v1",
       "persistentvolumeclaims",
       "persistentvolumeclaim",
       "PersistentVolumeClaim",
       true,
       {"create", "delete", "get", "list", "watch"},
       {"pvc"},
       {}},
      {"batch",
       "v1",
       "jobs",
       "job",
       "Job",
       true,
       {"create", "delete", "get", "list", "watch"},
       {},
       {"status"}},
      // Kueue's Workloads (kueue.h): written by the fake's Kueue, read by clients.
      {"kueue.x-k8s.io",
       "v1beta1",
       "workloads",
       "workload",
       "Workload",
       true,
       {"delete", "get", "list", "watch"},
       {"wl"},
       {"status"}},
  };
  return kResources;
}

const ResourceInfo* find_resource(const std::string& group, const std::string& plural) {
  for (const ResourceInfo& r : served_resources()) {
    if (r.group == group && r.plural == plural) return &r;
  }
  return nullptr;
}

std::optional<DiscoveryAnswer> discovery(const std::string& path, const std::string& accept,
                                         const std::string& server_address) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  if (p == "/version") {
    return ok({{"major", "1"},
               {"minor", "32"},
               {"gitVersion", "v1.32.0-fake"},
               {"gitCommit", "0000000000000000000000000000000000000000"},
               {"gitTreeState", "clean"},
               {"buildDate", "2025-01-01T00:00:00Z"},
               {"goVersion", "go1.23.4"},
               {"compiler", "gc"},
               {"platform", "linux/amd64"}});
  }
  if (p == "/api") {
    if (wants_aggregated(accept)) return ok(aggregated_list(true), kAggregatedType);
    return ok({{"kind", "APIVersions"},
               {"versions", json::array({"v1"})},
               {"serverAddressByClientCIDRs",
                json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}})}});
  }
  if (p == "/apis") {
    if (wants_aggregated(accept)) return ok(aggregated_list(false), kAggregatedType);
    json groups = json::array();
    for (const auto& [name, version] : api_groups()) groups.push_back(api_group(name, version));
    return ok({{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}});
  }
  if (p == "/api/v1") return ok(legacy_resource_list("v1"));
  if (p == "/openapi/v3") return ok(openapi_v3_root());
  if (p == "/openapi/v3/api/v1") return ok(openapi_v3_group(""));
  for (const auto& [name, version] : api_groups()) {
    if (p == "/apis/" + name) {
      json group = api_group(name, version);
      group["kind"] = "APIGroup";
      group["apiVersion"] = "v1";
      return ok(group);
    }
    if (p == "/apis/" + name + "/" + version) return ok(legacy_resource_list(name + "/" + version));
    if (p == "/openapi/v3/apis/" + name + "/" + version) return ok(openapi_v3_group(name));
  }
  if (p.rfind("/openapi/", 0) == 0) {
    return DiscoveryAnswer{404, "application/json",
                           json{{"kind", "Status"},
                                {"apiVersion", "v1"},
                                {"metadata", json::object()},
                                {"status", "Failure"},
                                {"message", "the server could not find the requested resource"},
                                {"reason", "NotFound"},
                                {"details", json::object()},
                                {"code", 404}}
                               .dump()};
  }
  return std::nullopt;
}

}  // namespace orch::fake_kube
