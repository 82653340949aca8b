#pragma once
// The fake Kubernetes API server: HTTPS with bearer-token auth in front of discovery, the
// resource routes and the test hooks, over a simulated cluster whose pods run as local
// processes. See README.md.

#include <chrono>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "testkit/fake_kube/cluster.h"

namespace orch::fake_kube {

struct FakeKubeOptions {
  std::string bind = "127.0.0.1";
  int port = 0;  // 0: a free port
  std::string cert_file;
  std::string key_file;
  std::string token;  // required: Authorization: Bearer <token>
  ClusterOptions cluster;
  std::ostream* request_log = nullptr;  // one line per request when set
};

class FakeKubeServer {
 public:
  explicit FakeKubeServer(FakeKubeOptions options);
  ~FakeKubeServer();  // stop()
  FakeKubeServer(const FakeKubeServer&) = delete;
  FakeKubeServer& operator=(const FakeKubeServer&) = delete;

  // Listens, then starts the cluster. Throws std::runtime_error.
  void start();
  // Stops serving, ends every watch and kills every pod process. Safe to call twice.
  void stop();
  int port() const;
  std::string url() const;  // https://127.0.0.1:PORT
  Cluster& cluster();
  // Accepts another bearer token besides options.token (one an exec credential plugin hands
  // out), until `expires` when given: after it, 401 Unauthorized, as a real server answers an
  // expired token. Thread-safe. Hook: POST /fake/tokens?token=T[&ttl_s=N].
  void accept_token(const std::string& token,
                    std::optional<std::chrono::system_clock::time_point> expires = std::nullopt);
  // Every request that was refused with 401 so far.
  int unauthorized() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace orch::fake_kube
