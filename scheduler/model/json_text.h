#pragma once
// JSON to text without the one way nlohmann's dump() can throw: a string that is not valid
// UTF-8. What sites report (node names, file names in a listing) and what jobs print is not
// ours to trust, and a throw in the brain's transaction would refuse that observation every
// time it came back. Invalid bytes become U+FFFD, the same way each time, so two listings of
// the same files still compare equal.

#include <string>

#include <nlohmann/json.hpp>

namespace orch {

inline std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace orch
