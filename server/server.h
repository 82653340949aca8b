#pragma once
// The composition root: the one place that knows every concrete piece. It opens the state
// directory, builds an adapter and a site worker per cluster, the brain and its loop, the REST
// backend and the HTTP server, and starts them in order. `serve` and `demo` both use it.

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

struct ServerSettings {
  std::string state_dir;
  std::optional<std::string> bind;  // overrides the clusters file's server.bind
  std::optional<int> port;          // overrides server.port; 0 picks a free port
  std::string agent_path;           // default: orchestrate-agent beside this executable
  int tick_ms = 250;                // how often the brain checks timers (backoff, grace)
  std::string config_path;          // the clusters file, for reloads; empty: no reload
  // Serve on an address other than loopback without TLS (refused otherwise).
  bool insecure_bind = false;
};

class Server {
 public:
  static Result<std::unique_ptr<Server>> start(const ClustersFile& config, ServerSettings settings);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;
  std::string url() const;
  // Reads the clusters file again (server/cluster_reload.h): what changed, or why nothing did.
  Result<nlohmann::json> reload();
  void stop();

 private:
  struct Parts;
  explicit Server(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

// The directory of the running executable (to find orchestrate-agent and toy_trainer).
std::string executable_dir();

}  // namespace orch
