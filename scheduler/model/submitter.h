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
};

}  // namespace orch
