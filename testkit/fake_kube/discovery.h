#pragma once
// What the fake serves, as discovery tells clients: the resource table the routes use too, and
// the discovery documents (/version, /api, /apis, /api/v1, /apis/GROUP, /apis/GROUP/VERSION for
// batch/v1 and kueue.x-k8s.io/v1beta1, both legacy and aggregated apidiscovery.k8s.io/v2), plus
// the OpenAPI answers kubectl asks for.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace orch::fake_kube {

struct ResourceInfo {
  std::string group;  // "" for the core group
  std::string version;
  std::string plural;
  std::string singular;
  std::string kind;
  bool namespaced = true;
  std::vector<std::string> verbs;
  std::vector<std::string> short_names;
  std::vector<std::string> subresources;  // "log", "status"

  std::string group_version() const { return group.empty() ? version : group + "/" + version; }
  // "pods", "jobs.batch": how error messages name the resource.
  std::string qualified() const { return group.empty() ? plural : plural + "." + group; }
};

const std::vector<ResourceInfo>& served_resources();
const ResourceInfo* find_resource(const std::string& group, const std::string& plural);

// A discovery response: the body and its Content-Type (the aggregated form answers with
// application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList).
struct DiscoveryAnswer {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// nullopt when the path is not a discovery or OpenAPI path. `accept` is the request's Accept
// header; `server_address` "127.0.0.1:PORT" for serverAddressByClientCIDRs.
std::optional<DiscoveryAnswer> discovery(const std::string& path, const std::string& accept,
                                         const std::string& server_address);

}  // namespace orch::fake_kube
