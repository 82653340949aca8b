// See complete_command.h.
#include "cli/complete_command.h"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/output_table.h"
#include "cli/user_config.h"
#include "scheduler/model/job_state.h"

namespace orch {
namespace {

using nlohmann::json;

// GET target's `list` items: each one's `key` as text, without repeats, in the server's order.
std::vector<std::string> pick(const ClientOptions& o, const std::string& target,
                              const std::string& list, const std::string& key) {
  json body;
  std::ostringstream quiet;  // a completion prints no errors into the shell
  if (call_json(o, "GET", target, body, quiet) != kExitOk) return {};
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const json& item : items(body, list)) {
    const std::string word = field(item, key);
    if (!word.empty() && word != "-" && seen.insert(word).second) out.push_back(word);
  }
  return out;
}

std::vector<std::string> ask_server(const ClientOptions& o, const std::string& kind) {
  if (kind == "jobs") return pick(o, "/api/v1/jobs?limit=200", "jobs", "id");
  if (kind == "clusters") return pick(o, "/api/v1/clusters", "clusters", "name");
  if (kind == "nodes") return pick(o, "/api/v1/nodes", "nodes", "name");
  if (kind == "classes") return pick(o, "/api/v1/jobs?limit=1000", "jobs", "priority_class");
  return {};
}

std::string cache_path(const std::string& kind) {
  const std::string dir = user_cache_dir();
  return dir.empty() ? std::string() : dir + "/complete-" + kind + ".json";
}

// The cached words of kind for this server when younger than the TTL.
std::optional<std::vector<std::string>> cached(const std::string& path, const std::string& server,
                                               long long now_ms) {
  if (path.empty()) return std::nullopt;
  auto text = read_small_file(path);
  if (!text) return std::nullopt;
  const json j = json::parse(*text, nullptr, false);
  if (!j.is_object() || j.value("server", "") != server || !j["words"].is_array()) {
    return std::nullopt;
  }
  const long long at = j.value("at_ms", 0LL);
  if (now_ms < at || now_ms - at >= kCompleteCacheTtlMs) return std::nullopt;
  std::vector<std::string> words;
  for (const json& w : j["words"]) {
    if (w.is_string()) words.push_back(w);
  }
  return words;
}

}  // namespace

const std::vector<std::string>& completion_kinds() {
  static const std::vector<std::string> kinds = {"jobs", "clusters", "nodes", "states", "classes"};
  return kinds;
}

int run_complete(const ClientOptions& o, const std::string& kind, long long now_ms,
                 std::ostream& out) {
  std::vector<std::string> words;
  if (kind == "states") {
    for (JobState s : kAllJobStates) words.emplace_back(to_string(s));
  } else {
    bool known = false;
    for (const std::string& k : completion_kinds()) known = known || k == kind;
    if (!known) return kExitUsage;
    const std::string path = cache_path(kind);
    if (auto hit = cached(path, o.server, now_ms)) {
      words = std::move(*hit);
    } else {
      ClientOptions quick = o;
      quick.timeout_ms = std::min(o.timeout_ms, kCompleteTimeoutMs);
      words = ask_server(quick, kind);
      std::string ignored;  // a cache that cannot be written only costs the next Tab a call
      if (!path.empty()) {
        write_private_file(
            path, json{{"server", o.server}, {"at_ms", now_ms}, {"words", words}}.dump() + "\n",
            ignored);
      }
    }
  }
  for (const std::string& w : words) out << w << '\n';
  return kExitOk;
}

}  // namespace orch
