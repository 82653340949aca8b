// KubernetesSite::preflight (`orchestrate cluster check`, scheduler/model/preflight.h): the API
// server takes the credentials, the namespace exists, RBAC allows every verb this adapter uses
// (one SelfSubjectAccessReview each), and the helper pods have an image.

#include <nlohmann/json.hpp>

#include "adapters/kubernetes/kube_site.h"

namespace orch {
namespace {

using json = nlohmann::json;

// What this adapter asks the API server for: (verb, group, resource), namespaced but nodes.
struct Access {
  const char* verb;
  const char* group;
  const char* resource;
};
constexpr Access kAccesses[] = {
    {"list", "", "nodes"},      {"get", "", "pods"},         {"list", "", "pods"},
    {"watch", "", "pods"},      {"create", "", "pods"},      {"delete", "", "pods"},
    {"get", "", "pods/log"},    {"create", "", "pods/exec"}, {"create", "batch", "jobs"},
    {"get", "batch", "jobs"},   {"list", "batch", "jobs"},   {"delete", "batch", "jobs"},
    {"create", "", "services"}, {"delete", "", "services"},  {"create", "", "secrets"},
    {"patch", "", "secrets"},   {"delete", "", "secrets"},
};

std::string review_body(const Access& a, const std::string& ns) {
  const std::string resource = a.resource;
  const auto slash = resource.find('/');
  json attrs = {{"verb", a.verb}, {"group", a.group}, {"resource", resource.substr(0, slash)}};
  if (slash != std::string::npos) attrs["subresource"] = resource.substr(slash + 1);
  if (resource != "nodes") attrs["namespace"] = ns;
  return json{{"apiVersion", "authorization.k8s.io/v1"},
              {"kind", "SelfSubjectAccessReview"},
              {"spec", {{"resourceAttributes", attrs}}}}
      .dump();
}

std::string status_words(const Result<KubeResponse>& r) {
  if (!r) return r.error().message;
  return "HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 200);
}

}  // namespace

std::vector<PreflightCheck> KubernetesSite::preflight() {
  std::vector<PreflightCheck> out;
  auto api = client_->request("GET", "/api");
  if (!api || api->status == 401 || api->status >= 500) {
    out.push_back(check_failed("auth", "the API server did not take the credentials (" +
                                           status_words(api) +
                                           "): fix kubernetes.kubeconfig and context"));
    for (const char* name : {"namespace", "rbac"}) out.push_back(check_skipped(name, "auth"));
  } else {
    out.push_back(check_passed("auth", "the API server takes the credentials"));
    out.push_back(namespace_check());
    out.push_back(rbac_check());
  }
  const std::string image = !spec_.kubernetes.helper_image.empty() ? spec_.kubernetes.helper_image
                                                                   : spec_.kubernetes.pod.image;
  out.push_back(image.empty() ? check_failed("helper-image",
                                             "neither kubernetes.helper_image nor pod.image is "
                                             "set: storage and probes need an image")
                              : check_passed("helper-image", image));
  return out;
}

PreflightCheck KubernetesSite::namespace_check() {
  auto r = client_->request("GET", "/api/v1/namespaces/" + namespace_);
  if (r && r->status == 200) return check_passed("namespace", namespace_ + " exists");
  if (r && r->status == 403) {
    return check_passed("namespace", "not checked: these credentials may not read namespace " +
                                         namespace_ + " itself (the RBAC check says more)");
  }
  return check_failed("namespace", "namespace " + namespace_ + " is not there (" + status_words(r) +
                                       "): fix kubernetes.namespace");
}

PreflightCheck KubernetesSite::rbac_check() {
  std::string denied;
  for (const Access& a : kAccesses) {
    auto r = client_->request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                              review_body(a, namespace_));
    const json answer = r && r->status / 100 == 2 ? json::parse(r->body, nullptr, false) : json();
    const bool allowed = answer.is_object() && answer.contains("status") &&
                         answer["status"].is_object() && answer["status"].value("allowed", false);
    if (!r || r->status / 100 != 2) {
      return check_failed("rbac",
                          "cannot ask the API server what is allowed (" + status_words(r) + ")");
    }
    if (!allowed) denied += std::string(denied.empty() ? "" : ", ") + a.verb + " " + a.resource;
  }
  if (denied.empty()) return check_passed("rbac", "every verb orchestrate uses is allowed");
  return check_failed("rbac", "the credentials may not " + denied + " in namespace " + namespace_ +
                                  ": grant them in the service account's Role");
}

}  // namespace orch
