#pragma once
// A small HTTPS client for tests that talk to the fake API server directly (hooks, watches,
// raw requests): verifies the server against the test CA, sends the bearer token, and reads
// watch streams event by event. Synchronous, one connection per call or per watch.

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace orch::fake_kube {

struct KubeEndpoint {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string ca_file;
  std::string token;  // "" sends no Authorization header
};

struct KubeReply {
  int status = 0;  // 0 when the request failed (see error)
  std::string content_type;
  std::string body;
  std::string error;
  nlohmann::json json() const;  // null when the body is not JSON
};

// A body goes as application/json, or application/merge-patch+json for a PATCH.
KubeReply kube_request(const KubeEndpoint& endpoint, const std::string& method,
                       const std::string& target, const std::string& body = "",
                       std::chrono::milliseconds timeout = std::chrono::seconds(10),
                       const std::string& accept = "application/json");

class WatchStream {
 public:
  // Sends the GET and reads the response header. On failure returns nullptr with error set.
  static std::unique_ptr<WatchStream> open(const KubeEndpoint& endpoint, const std::string& target,
                                           std::string& error);
  ~WatchStream();
  int status() const;
  // The next event ({"type":..,"object":..}), or nullopt when none came before the timeout or
  // the stream ended (see ended()).
  std::optional<nlohmann::json> next(std::chrono::milliseconds timeout);
  bool ended() const;

 private:
  WatchStream();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace orch::fake_kube
