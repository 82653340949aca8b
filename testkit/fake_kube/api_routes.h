#pragma once
// The resource routes: /api/v1/... and /apis/batch/v1/... for the resources in
// served_resources(): create (POST), get, list (labelSelector, fieldSelector; a Table when the
// client asks), watch (?watch=1, resourceVersion, timeoutSeconds), delete (DeleteOptions in
// the body or the query), patch (patch.h; where discovery lists it) and pods/log (container,
// tailLines, limitBytes, follow).

#include <atomic>

#include <nlohmann/json.hpp>

#include "testkit/fake_kube/cluster.h"
#include "testkit/fake_kube/exec_cut.h"
#include "testkit/fake_kube/http_exchange.h"
#include "testkit/fake_kube/kube_json.h"
#include "testkit/fake_kube/rbac.h"

namespace orch::fake_kube {

struct ApiState {
  explicit ApiState(Cluster& c) : cluster(c) {}
  Cluster& cluster;
  // Set by the compact hook: a watch from a too-old resourceVersion is answered with HTTP 410
  // instead of the real server's 200 + one ERROR event (code 410, reason Expired).
  std::atomic<bool> gone_as_http{false};
  // Set by the forbid hook: verbs the credentials may not use (rbac.h).
  Forbidden forbidden;
  // Set by the exec cut hook: the next exec stream past N bytes is cut there (exec_cut.h).
  ExecCut exec_cut;
};

// false when the path is not a resource path (the caller answers 404 then).
bool handle_resource(ApiState& state, const Request& request, ResponseWriter& out);

void send_json(ResponseWriter& out, int status, const nlohmann::json& body);
void send_error(ResponseWriter& out, const ApiError& error);
// 404 NotFound Status as the real server words it for an unknown path.
void send_not_found_path(ResponseWriter& out);

}  // namespace orch::fake_kube
