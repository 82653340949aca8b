#pragma once
// The HTTP/1.1 server (Boost.Beast, kept out of this header). It turns each request into a
// plain HttpRequest, calls the Handler, and writes back its HttpResponse. It answers by
// itself only what the handler cannot: 400 for malformed HTTP, 413 for a body larger than
// max_body, 431 for oversized headers, and 500 if the handler throws.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "scheduler/common/result.h"
#include "web/http_types.h"

namespace orch {

struct ServerOptions {
  std::string bind = "127.0.0.1";
  int port = 8080;  // 0 picks a free port; port() tells which
  std::size_t max_body = 1 << 20;
  // Threads that answer requests. A request runs on its thread start to end (a read, or a
  // command waiting for the brain), so these bound how many are served at once.
  int threads = 8;
  // A connection that sends nothing for this long (mid-request or between keep-alive
  // requests) is closed, so a slow client never holds a thread or a socket for ever.
  std::chrono::milliseconds idle_timeout{30000};
};

using Handler = std::function<HttpResponse(const HttpRequest&)>;

class HttpServer {
 public:
  HttpServer(ServerOptions options, Handler handler);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds, listens and starts the threads. io when the address cannot be bound, invalid for
  // a bad bind address, conflict when already started.
  Result<void> start();
  // The port actually bound (useful with port 0); 0 before start().
  int port() const;
  // Closes the listener and every connection and joins the threads. Prompt: it does not wait
  // for idle clients. Safe to call twice.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace orch
