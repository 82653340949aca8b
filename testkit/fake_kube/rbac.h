#pragma once
// A stand-in for RBAC. The fake lets every accepted token do everything; a test takes verbs
// away (POST /fake/forbid?verb=create&resource=secrets), and requests for them are answered
// 403 Forbidden with the real server's wording, as for credentials whose Role lacks the verb.

#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "testkit/fake_kube/http_exchange.h"
#include "testkit/fake_kube/kube_json.h"

namespace orch::fake_kube {

class Forbidden {
 public:
  void forbid(const std::string& verb, const std::string& resource);
  void allow_all();
  // The 403 for a request (`verb` as RBAC names it: get, list, watch, create, patch, update,
  // delete), or nullopt when it is allowed. `name` is "" for collection requests.
  std::optional<ApiError> check(const std::string& verb, const std::string& group,
                                const std::string& resource, const std::string& ns,
                                const std::string& name) const;

 private:
  mutable std::mutex mu_;
  std::set<std::pair<std::string, std::string>> denied_;  // (verb, resource)
};

// POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews: whether this token may do
// spec.resourceAttributes (verb, group, resource, namespace), answered from `forbidden` as the
// real server answers from RBAC (status.allowed, and a reason when denied). Other requests:
// false, nothing sent. A body without resourceAttributes.verb and .resource is 400.
bool handle_access_review(const Forbidden& forbidden, const Request& request, ResponseWriter& out);

// The RBAC verb of an API request.
std::string rbac_verb(const std::string& method, bool named, bool watch);

}  // namespace orch::fake_kube
