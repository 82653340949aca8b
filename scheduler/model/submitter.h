#pragma once
// Who submits a job, as the server knows them from the API token (never from the spec): the
// user, whether they may act for any team (operators and admins; the server itself, in tests
// and the simulator), and otherwise the teams their token is bound to, the first the default.

#include <string>
#include <vector>

namespace orch {

struct Submitter {
  std::string user;
  bool any_team = true;
  std::vector<std::string> teams;
  // The workdir archive the request named (POST /api/v1/jobs?workdir=sha256:<hex>): the
  // backend gives it to a spec with `workdir:` once the code store says this user uploaded it
  // (web/code_api.h). Empty: none named.
  std::string workdir_sha256;
  // POST /api/v1/jobs?queue_anyway=true (`job submit --queue-anyway`): a job no configured
  // cluster could ever hold is kept, waiting for a cluster still to come, instead of refused.
  bool queue_anyway = false;
};

}  // namespace orch
