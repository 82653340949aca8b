#include "cli/client_token.h"

#include <cstdlib>
#include <iostream>

#include "cli/launch_token_guard.h"
#include "cli/user_config.h"
#include "scheduler/secrets/secret_file.h"

namespace orch {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string user_config_token() {
  const std::string dir = user_config_dir();
  return dir.empty() ? std::string() : read_token_file(dir + "/token");
}

}  // namespace

std::string read_token_file(const std::string& path) {
  // Bounded like a secret: a FIFO or a device named by mistake is refused, never waited on.
  auto text = read_secret_file("token", path, kSecretReadDeadline, 4096);
  if (!text) return "";
  std::string line = text->substr(0, text->find('\n'));
  const auto b = line.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  line = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
  return line.size() <= 256 ? line : "";
}

std::string find_token(const std::string& state_dir) {
  if (std::string t = api_token_from_env(std::cerr); !t.empty()) return t;
  if (std::string file = env("ORCH_TOKEN_FILE"); !file.empty()) return read_token_file(file);
  const std::string state = state_dir.empty() ? env("ORCH_STATE") : state_dir;
  if (!state.empty()) {
    if (std::string t = read_token_file(state + "/admin.token"); !t.empty()) return t;
  }
  return user_config_token();
}

}  // namespace orch
