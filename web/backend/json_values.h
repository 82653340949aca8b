#pragma once
// Small JSON helpers the scheduler backend's files share.

#include <optional>

#include <nlohmann/json.hpp>

namespace orch {

// The value, or null when absent.
template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace orch
