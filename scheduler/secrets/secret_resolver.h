#pragma once
// What a launch asks of the secret registry: the values of a job's secret references, for the
// job's team. The site worker calls it just before each launch (scheduler/runtime), so a grant
// taken back or a secret deleted after submit stops the next launch.

#include <map>
#include <string>

#include "scheduler/common/result.h"

namespace orch {

class SecretResolver {
 public:
  virtual ~SecretResolver() = default;
  // refs: variable -> secret name (an empty name is a retired reference). The values by
  // variable; invalid for an unknown secret or a retired reference, forbidden for a secret not
  // granted to team. Messages name variables and secrets, never a value.
  virtual Result<std::map<std::string, std::string>> resolve(
      const std::map<std::string, std::string>& refs, const std::string& team) const = 0;
};

}  // namespace orch
