#pragma once
// Test hooks under /fake/ (same bearer token as the API). See README.md for the list.

#include "testkit/fake_kube/api_routes.h"
#include "testkit/fake_kube/http_exchange.h"

namespace orch::fake_kube {

// false when the path is not under /fake/.
bool handle_hook(ApiState& state, const Request& request, ResponseWriter& out);

// "KILL", "SIGKILL", "9" -> 9; -1 when unknown.
int parse_signal(const std::string& text);

}  // namespace orch::fake_kube
