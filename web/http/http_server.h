#pragma once
// The HTTP/1.1 server (Boost.Beast, kept out of this header). It turns each request into a
// plain HttpRequest, calls the Handler on a thread of the request's lane, and writes back its
// HttpResponse, over plain HTTP or, given a certificate and key, over TLS (HTTPS only: a plain
// request to a TLS server gets a plain 400 saying so). It answers by itself only what the
// handler cannot: 400 for malformed HTTP (an HTTP/1.1 request without exactly one Host header
// included), 501 for a Transfer-Encoding other than exactly "chunked" (or one beside
// Content-Length), 413 for a body larger than max_body, 431 for oversized headers, 503 when the
// request's lane is full, and 500 if the handler throws. After a 400, 501, 413 or 431 the
// connection closes: nothing the client sent after that request is read as a request.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/common/result.h"
#include "web/http/http_types.h"

namespace orch {

// A pool of threads that answers one kind of request. Kinds that wait (a command waiting for
// the brain, a call that reaches a provider over SSH) get lanes of their own, so they can never
// take the threads another kind needs: a health probe or a read answers however many commands
// are waiting. A lane with max_waiting requests queued or running answers 503 at once.
struct LaneOptions {
  std::string name;
  int threads = 1;
  std::size_t max_waiting = 1024;
};

// A larger body limit for the requests of one method whose target starts with path_prefix (a
// workdir upload, web/code_routes.h).
struct BodyLimit {
  std::string method;
  std::string path_prefix;
  std::size_t max_body = 0;
};

struct ServerOptions {
  std::string bind = "127.0.0.1";
  int port = 8080;  // 0 picks a free port; port() tells which
  std::size_t max_body = 1 << 20;
  // The first that matches a request's method and target gives its limit instead of max_body.
  std::vector<BodyLimit> body_limits;
  // Threads that read requests and write answers (they never run a handler).
  int io_threads = 2;
  // Where handlers run; lane_of picks a lane by index for each request (none: lane 0). An index
  // past the end means the last lane.
  std::vector<LaneOptions> lanes = {{"all", 8, 1024}};
  std::function<std::size_t(const HttpRequest&)> lane_of;
  // A connection that sends nothing for this long (mid-request or between keep-alive
  // requests) is closed, so a slow client never holds a thread or a socket for ever.
  std::chrono::milliseconds idle_timeout{30000};
  // HTTPS: the certificate chain and the private key (PEM files), both or neither. TLS 1.2 is
  // the oldest version accepted.
  std::string tls_cert_file;
  std::string tls_key_file;
};

using Handler = std::function<HttpResponse(const HttpRequest&)>;

class HttpServer {
 public:
  HttpServer(ServerOptions options, Handler handler);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds, listens and starts the threads. io when the address cannot be bound or a TLS file
  // cannot be read, invalid for a bad bind address, no lane or a TLS certificate and key that
  // cannot be used together, conflict when already started.
  Result<void> start();
  // The port actually bound (useful with port 0); 0 before start().
  int port() const;
  // Closes the listener and every connection and joins the threads. Prompt: it does not wait
  // for idle clients; it does wait for handlers already running. Safe to call twice.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace orch
