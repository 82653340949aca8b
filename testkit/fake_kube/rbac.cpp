#include "testkit/fake_kube/rbac.h"

namespace orch::fake_kube {

void Forbidden::forbid(const std::string& verb, const std::string& resource) {
  std::lock_guard lock(mu_);
  denied_.insert({verb, resource});
}

void Forbidden::allow_all() {
  std::lock_guard lock(mu_);
  denied_.clear();
}

std::optional<ApiError> Forbidden::check(const std::string& verb, const std::string& group,
                                         const std::string& resource, const std::string& ns,
                                         const std::string& name) const {
  {
    std::lock_guard lock(mu_);
    if (denied_.count({verb, resource}) == 0) return std::nullopt;
  }
  const std::string what = name.empty() ? resource : resource + " \"" + name + "\"";
  ApiError e(403, "Forbidden",
             what + " is forbidden: User \"fake-kube-user\" cannot " + verb + " resource \"" +
                 resource + "\" in API group \"" + group + "\"" +
                 (ns.empty() ? " at the cluster scope" : " in the namespace \"" + ns + "\""));
  e.details = {{"kind", resource}};
  if (!name.empty()) e.details["name"] = name;
  if (!group.empty()) e.details["group"] = group;
  return e;
}

std::string rbac_verb(const std::string& method, bool named, bool watch) {
  if (method == "GET") return watch ? "watch" : named ? "get" : "list";
  if (method == "POST") return "create";
  if (method == "PATCH") return "patch";
  if (method == "PUT") return "update";
  if (method == "DELETE") return named ? "delete" : "deletecollection";
  return method;
}

}  // namespace orch::fake_kube
