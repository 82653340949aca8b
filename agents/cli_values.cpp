// See cli_values.h.
#include "agents/cli_values.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace orch::agent {

bool parse_int64(const std::string& s, std::int64_t min, std::int64_t max, std::int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max) return false;
  *out = v;
  return true;
}

bool parse_seconds(const std::string& s, double max, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v) || v < 0 || v > max) return false;
  *out = v;
  return true;
}

}  // namespace orch::agent
