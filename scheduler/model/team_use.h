#pragma once
// One live attempt's claim on the fleet, with its job's team: the store lists them
// (Store::team_uses) and team quotas count them (placement/team_quotas.h).

#include <cstdint>
#include <string>

namespace orch {

struct TeamUse {
  std::int64_t attempt = 0;  // AttemptId; attempts are counted in id order (oldest first)
  std::string team;          // "" for a job that names none
  std::string cluster;
  int gpus = 0;
};

}  // namespace orch
