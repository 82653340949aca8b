#pragma once
// What the fake's routes see of HTTP: a plain request and a writer that either sends one
// response or streams a chunked one (watches, followed logs). The TLS server implements the
// writer; nothing here includes Boost.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace orch::fake_kube {

struct Request {
  std::string method;                        // upper case
  std::string path;                          // without the query
  std::map<std::string, std::string> query;  // decoded; a repeated key keeps its last value
  std::vector<std::pair<std::string, std::string>> query_all;  // every pair, in order
  std::map<std::string, std::string> headers;                  // names in lower case
  std::string body;

  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
  std::string param(const std::string& name) const {
    auto it = query.find(name);
    return it == query.end() ? "" : it->second;
  }
  bool has_param(const std::string& name) const { return query.count(name) > 0; }
};

// A WebSocket connection after the server accepted an Upgrade (pods/exec): binary messages.
class WebSocket {
 public:
  virtual ~WebSocket() = default;
  virtual bool write(std::string_view message) = 0;  // false once the connection is gone
  // The next message; nullopt when the client closed the connection or it broke.
  virtual std::optional<std::string> read() = 0;
  virtual void close() = 0;  // a normal close
};

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;
  // One whole response.
  virtual void send(int status, const std::string& content_type, const std::string& body) = 0;
  // Starts a chunked response; then write_chunk() as often as needed and end_stream().
  virtual bool begin_stream(int status, const std::string& content_type) = 0;
  virtual bool write_chunk(std::string_view data) = 0;  // false once the client is gone
  virtual void end_stream() = 0;
  // True when the client closed the connection (or sent something, which an HTTP/1.1 client
  // waiting for a streamed answer never does), or the server is stopping.
  virtual bool client_gone() = 0;
  // For a WebSocket Upgrade request: accepts it with `protocol` as Sec-WebSocket-Protocol (the
  // response of the request). nullptr when the request is not an upgrade or the handshake fails.
  virtual std::unique_ptr<WebSocket> accept_websocket(const std::string& protocol) {
    (void)protocol;
    return nullptr;
  }
};

using RequestHandler = std::function<void(const Request&, ResponseWriter&)>;

// Splits "/a/b?x=1&y=%20" into the request's path and decoded query ('+' is a space).
void parse_target(const std::string& target, Request& request);

}  // namespace orch::fake_kube
