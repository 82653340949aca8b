#pragma once
// Admission: what the API server does to an object before it is stored. Names are checked
// (RFC 1123 subdomain, or label for services and namespaces) and each served resource gets the
// real defaults: Jobs (parallelism, completions, backoffLimit, completionMode, the
// controller-uid selector and template labels; restartPolicy must be Never or OnFailure), Pods
// (restartPolicy, terminationGracePeriodSeconds, the default not-ready/unreachable
// tolerations, status Pending), Services (a ClusterIP unless None, port protocol),
// Namespaces (phase Active) and Secrets (secrets.h). Errors are ApiError 422 Invalid with the
// real wording.

#include <string>

#include <nlohmann/json.hpp>

#include "testkit/fake_kube/discovery.h"

namespace orch::fake_kube {

// Checks and defaults `object` (already carrying kind, apiVersion and namespace) for `info`.
void admit(const ResourceInfo& info, nlohmann::json& object);

void admit_job(nlohmann::json& job);
void admit_pod(nlohmann::json& pod);  // the job controller's pods go through it too

// "Pod", "Job.batch": how "... is invalid" messages name the kind.
std::string kind_for_messages(const ResourceInfo& info);

}  // namespace orch::fake_kube
