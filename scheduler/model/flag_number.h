#pragma once
// A number as the agent's flags take it: the shortest form printf's %g gives ("2", "0.5",
// "1e+09"), which the agent's flag reader (agents/cli_values.h) reads back.

#include <cstdio>
#include <string>

namespace orch {

inline std::string flag_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace orch
