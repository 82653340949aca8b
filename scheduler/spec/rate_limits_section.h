#pragma once
// The clusters file's `server.rate_limits` (docs/config.md): how many changes a second each
// role's callers may make, as {user: {per_s: 10, burst: 40}, operator: ..., admin: ...}; a
// role left out keeps its default (scheduler/model/rate_limits.h). Checked as the rest of the
// file is (file:line:col).

#include "scheduler/model/rate_limits.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// server: the `server:` map; out keeps its defaults for whatever is absent.
void read_rate_limits(const yaml::MapView& server, RateLimits& out);

}  // namespace orch
