#include "adapters/local/format_arg.h"

#include <charconv>

namespace orch::local {

std::string format_arg(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(value);
}

}  // namespace orch::local
