#include "cli/client_token.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "web/http_client.h"
#include "web/http_types.h"

namespace orch {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string user_config_token() {
  std::string base = env("XDG_CONFIG_HOME");
  if (base.empty()) {
    const std::string home = env("HOME");
    if (home.empty()) return "";
    base = home + "/.config";
  }
  return read_token_file(base + "/orchestrate/token");
}

// What a server on this machine says about where its admin token lies.
std::string local_server_token(const std::string& server_url, RequestOptions request) {
  auto url = parse_server_url(server_url);
  if (!url || !is_loopback_host(url->host)) return "";
  request.token.clear();
  auto r = http_request(server_url, "GET", "/healthz", "", "application/json", request);
  if (!r || r->status != 200) return "";
  const nlohmann::json body = nlohmann::json::parse(r->body, nullptr, false);
  if (!body.is_object() || !body.contains("token_file") || !body["token_file"].is_string())
    return "";
  return read_token_file(body["token_file"].get<std::string>());
}

}  // namespace

std::string read_token_file(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  const auto b = line.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  line = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
  return line.size() <= 256 ? line : "";
}

std::string find_token(const std::string& server_url, const RequestOptions& request) {
  if (std::string t = env("ORCH_TOKEN"); !t.empty()) return t;
  if (std::string file = env("ORCH_TOKEN_FILE"); !file.empty()) return read_token_file(file);
  if (std::string t = user_config_token(); !t.empty()) return t;
  static std::mutex mu;
  static std::map<std::string, std::string> found;
  std::lock_guard<std::mutex> lock(mu);
  auto it = found.find(server_url);
  if (it == found.end())
    it = found.emplace(server_url, local_server_token(server_url, request)).first;
  return it->second;
}

}  // namespace orch
