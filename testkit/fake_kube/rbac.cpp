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

bool handle_access_review(const Forbidden& forbidden, const Request& request, ResponseWriter& out) {
  if (request.path != "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews") return false;
  if (request.method != "POST") {
    out.send(405, "application/json", status_failure(405, "MethodNotAllowed", "only POST").dump());
    return true;
  }
  const json body = json::parse(request.body, nullptr, false);
  const json* attrs = body.is_object() && body.contains("spec") && body["spec"].is_object() &&
                              body["spec"].contains("resourceAttributes")
                          ? &body["spec"]["resourceAttributes"]
                          : nullptr;
  const auto field = [&](const char* key) {
    return attrs != nullptr && attrs->is_object() && attrs->contains(key) &&
                   (*attrs)[key].is_string()
               ? (*attrs)[key].get<std::string>()
               : std::string();
  };
  if (field("verb").empty() || field("resource").empty()) {
    out.send(400, "application/json",
             status_failure(400, "BadRequest", "spec.resourceAttributes needs verb and resource")
                 .dump());
    return true;
  }
  auto denied = forbidden.check(field("verb"), field("group"), field("resource"),
                                field("namespace"), field("name"));
  json status = {{"allowed", !denied}};
  if (denied) status["reason"] = std::string(denied->what());
  json answer = {{"kind", "SelfSubjectAccessReview"},
                 {"apiVersion", "authorization.k8s.io/v1"},
                 {"metadata", json::object()},
                 {"spec", body["spec"]},
                 {"status", status}};
  out.send(201, "application/json", answer.dump());
  return true;
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
