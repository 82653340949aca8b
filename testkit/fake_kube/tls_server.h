#pragma once
// HTTPS/1.1 for the fake API server (Boost.Asio SSL + Beast; the only server file that includes
// them). One thread per connection, blocking I/O: simple, and plenty for tests. Keep-alive,
// chunked streaming through ResponseWriter, and a stop() that is prompt: it closes the
// listener and every connection, and streaming handlers see client_gone().

#include <memory>
#include <string>

#include "testkit/fake_kube/http_exchange.h"

namespace orch::fake_kube {

struct TlsServerOptions {
  std::string bind = "127.0.0.1";
  int port = 0;  // 0: a free port; port() tells which
  std::string cert_file;
  std::string key_file;
};

class TlsServer {
 public:
  TlsServer(TlsServerOptions options, RequestHandler handler);
  ~TlsServer();
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;

  void start();  // throws std::runtime_error (bad certificate or key, port in use)
  int port() const;
  void stop();  // safe to call twice

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace orch::fake_kube
