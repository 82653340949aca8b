#pragma once
// How many changes (API requests other than GET and HEAD) each caller may make: a token bucket
// per caller that refills at per_s and holds at most burst (clusters file
// `server.rate_limits`, docs/config.md; enforced by web/access/rate_limiter.h). A value type
// here so that the spec reader and the server's guard share one set of defaults.

namespace orch {

struct RoleRate {
  double per_s = 10;  // changes a second, sustained
  int burst = 40;     // changes at once after a quiet spell
};

// By role. The defaults are sized for people and scripts, not floods: a user's CLI loop that
// submits a sweep of 40 jobs goes through at once and then at 10 a second, far beyond what the
// brain needs to keep up with, while one token's flood cannot fill the command lane (4 threads,
// 4096 waiting) for everyone. Operators and admins act for others (drains, many cancels), hence
// more. A viewer may change nothing; its requests are refused at the user's rate.
struct RateLimits {
  RoleRate user{10, 40};
  RoleRate operator_{20, 80};
  RoleRate admin{50, 200};
};

}  // namespace orch
