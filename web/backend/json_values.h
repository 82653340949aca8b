#pragma once
// Small helpers the scheduler backend's files share.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/store/rows.h"

namespace orch {

// The value, or null when absent.
template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// The newest attempt's MFU flag: the job's model size or peak FLOPs is misconfigured; "" when none.
inline std::string newest_mfu_flag(const std::vector<AttemptRow>& attempts) {
  for (auto it = attempts.rbegin(); it != attempts.rend(); ++it) {
    if (!it->mfu_flag.empty()) return it->mfu_flag;
  }
  return "";
}

}  // namespace orch
