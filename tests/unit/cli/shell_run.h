#pragma once
// Runs a shell command line for the CLI tests and captures its stdout and exit status.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace orch::testing {

struct ShellResult {
  int status = -1;  // the exit status, or -1 when it did not exit normally
  std::string out;
};

inline ShellResult shell(const std::string& command) {
  ShellResult r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) r.out.append(buf.data(), n);
  const int raw = ::pclose(pipe);
  if (raw != -1 && WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  return r;
}

// A value inside single quotes for sh.
inline std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace orch::testing
