// The only file of the fake server that includes Boost.Asio SSL and Beast.
#include "testkit/fake_kube/tls_server.h"

#include "scheduler/common/percent_encoding.h"

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <list>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

namespace orch::fake_kube {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Stream = ssl::stream<tcp::socket>;
namespace websocket = beast::websocket;

class WebSocketOverTls final : public WebSocket {
 public:
  explicit WebSocketOverTls(Stream& stream) : ws_(stream) { ws_.binary(true); }
  websocket::stream<Stream&>& ws() { return ws_; }

  bool write(std::string_view message) override {
    beast::error_code ec;
    ws_.write(asio::const_buffer(message.data(), message.size()), ec);
    return !ec;
  }
  std::optional<std::string> read() override {
    beast::flat_buffer buffer;
    beast::error_code ec;
    ws_.read(buffer, ec);
    if (ec) return std::nullopt;
    return beast::buffers_to_string(buffer.data());
  }
  void close() override {
    beast::error_code ec;
    ws_.close(websocket::close_code::normal, ec);
    // Read until the client's close frame (or an error): the close handshake completes.
    beast::flat_buffer buffer;
    while (!ec) ws_.read(buffer, ec);
  }

 private:
  websocket::stream<Stream&> ws_;
};

class Writer final : public ResponseWriter {
 public:
  Writer(Stream& stream, const http::request<http::string_body>& request, int fd,
         const std::atomic<bool>& stopping)
      : stream_(stream),
        request_(request),
        version_(request.version()),
        keep_alive_(request.keep_alive()),
        fd_(fd),
        stopping_(stopping) {}

  std::unique_ptr<WebSocket> accept_websocket(const std::string& protocol) override {
    if (responded_ || !websocket::is_upgrade(request_)) return nullptr;
    responded_ = true;
    keep_alive_ = false;  // the connection is the WebSocket's now
    auto socket = std::make_unique<WebSocketOverTls>(stream_);
    socket->ws().set_option(
        websocket::stream_base::decorator([protocol](websocket::response_type& res) {
          res.set(http::field::sec_websocket_protocol, protocol);
        }));
    beast::error_code ec;
    socket->ws().accept(request_, ec);
    if (ec) {
      broken_ = true;
      return nullptr;
    }
    return socket;
  }

  void send(int status, const std::string& content_type, const std::string& body) override {
    if (responded_) return;
    responded_ = true;
    http::response<http::string_body> res{static_cast<http::status>(status), version_};
    res.set(http::field::content_type, content_type);
    res.set(http::field::cache_control, "no-cache, private");
    res.keep_alive(keep_alive_);
    res.body() = body;
    res.prepare_payload();
    beast::error_code ec;
    http::write(stream_, res, ec);
    if (ec) broken_ = true;
  }

  bool begin_stream(int status, const std::string& content_type) override {
    if (responded_) return false;
    responded_ = true;
    http::response<http::empty_body> res{static_cast<http::status>(status), version_};
    res.set(http::field::content_type, content_type);
    res.set(http::field::cache_control, "no-cache, private");
    res.keep_alive(keep_alive_);
    res.chunked(true);
    http::response_serializer<http::empty_body> serializer{res};
    beast::error_code ec;
    http::write_header(stream_, serializer, ec);
    if (ec) broken_ = true;
    return !broken_;
  }

  bool write_chunk(std::string_view data) override {
    if (broken_) return false;
    if (data.empty()) return true;  // an empty chunk would end the body
    beast::error_code ec;
    asio::write(stream_, http::make_chunk(asio::const_buffer(data.data(), data.size())), ec);
    if (ec) broken_ = true;
    return !broken_;
  }

  void end_stream() override {
    if (broken_) return;
    beast::error_code ec;
    asio::write(stream_, http::make_chunk_last(), ec);
    if (ec) broken_ = true;
  }

  bool client_gone() override {
    if (broken_ || stopping_) return true;
    pollfd p{fd_, POLLIN | POLLRDHUP, 0};
    return ::poll(&p, 1, 0) > 0 && p.revents != 0;
  }

  bool responded() const { return responded_; }
  bool reusable() const { return keep_alive_ && !broken_; }

 private:
  Stream& stream_;
  const http::request<http::string_body>& request_;
  unsigned version_;
  bool keep_alive_;
  int fd_;
  const std::atomic<bool>& stopping_;
  bool responded_ = false;
  bool broken_ = false;
};

Request to_plain(const http::request<http::string_body>& req) {
  Request out;
  out.method = std::string(req.method_string());
  parse_target(std::string(req.target()), out);
  for (const auto& field : req) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = std::string(field.value());
  }
  out.body = req.body();
  return out;
}

struct Connection {
  int fd = -1;
  bool done = false;  // set (under the server's mutex) before the socket is closed
  std::thread thread;
};

}  // namespace

void parse_target(const std::string& target, Request& request) {
  const auto q = target.find('?');
  request.path = percent_decode(target.substr(0, q), true);
  if (q == std::string::npos) return;
  std::size_t start = q + 1;
  while (start <= target.size()) {
    auto end = target.find('&', start);
    if (end == std::string::npos) end = target.size();
    const std::string pair = target.substr(start, end - start);
    if (!pair.empty()) {
      const auto eq = pair.find('=');
      std::string key = percent_decode(pair.substr(0, eq), true);
      std::string value = eq == std::string::npos ? "" : percent_decode(pair.substr(eq + 1), true);
      request.query[key] = value;
      request.query_all.emplace_back(std::move(key), std::move(value));
    }
    start = end + 1;
  }
}

struct TlsServer::Impl {
  TlsServerOptions options;
  RequestHandler handler;
  asio::io_context ioc;
  ssl::context ctx{ssl::context::tls_server};
  std::unique_ptr<tcp::acceptor> acceptor;
  int bound_port = 0;
  std::atomic<bool> stopping{false};
  bool started = false;
  std::thread accept_thread;
  std::mutex mu;
  std::list<std::shared_ptr<Connection>> connections;

  void accept_loop() {
    for (;;) {
      tcp::socket socket(ioc);
      beast::error_code ec;
      acceptor->accept(socket, ec);
      if (stopping) return;
      if (ec) continue;
      auto conn = std::make_shared<Connection>();
      conn->fd = socket.native_handle();
      std::lock_guard lock(mu);
      for (auto it = connections.begin(); it != connections.end();) {
        if ((*it)->done && (*it)->thread.joinable()) {
          (*it)->thread.join();
          it = connections.erase(it);
        } else {
          ++it;
        }
      }
      connections.push_back(conn);
      conn->thread = std::thread(
          [this, conn, s = std::move(socket)]() mutable { serve(std::move(s), *conn); });
    }
  }

  void serve(tcp::socket socket, Connection& conn) {
    {
      Stream stream(std::move(socket), ctx);
      beast::error_code ec;
      stream.handshake(ssl::stream_base::server, ec);
      beast::flat_buffer buffer;
      while (!ec && !stopping) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(64u << 20);
        http::read(stream, buffer, parser, ec);
        if (ec) break;
        const auto& req = parser.get();
        Writer writer(stream, req, conn.fd, stopping);
        try {
          handler(to_plain(req), writer);
        } catch (const std::exception& e) {
          writer.send(500, "text/plain", std::string("internal error: ") + e.what());
        }
        if (!writer.responded()) writer.send(500, "text/plain", "no response");
        if (!writer.reusable()) break;
      }
      {
        std::lock_guard lock(mu);
        conn.done = true;
      }
      beast::error_code ignored;
      stream.lowest_layer().shutdown(tcp::socket::shutdown_both, ignored);
    }  // the socket closes here, after `done`: stop() never touches a reused descriptor
  }
};

TlsServer::TlsServer(TlsServerOptions options, RequestHandler handler)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
}

TlsServer::~TlsServer() {
  stop();
}

void TlsServer::start() {
  Impl& s = *impl_;
  if (s.started) return;
  beast::error_code ec;
  s.ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                    ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  s.ctx.use_certificate_chain_file(s.options.cert_file, ec);
  if (ec)
    throw std::runtime_error("cannot load certificate " + s.options.cert_file + ": " +
                             ec.message());
  s.ctx.use_private_key_file(s.options.key_file, ssl::context::pem, ec);
  if (ec) throw std::runtime_error("cannot load key " + s.options.key_file + ": " + ec.message());
  const auto address = asio::ip::make_address(s.options.bind, ec);
  if (ec) throw std::runtime_error("bad bind address " + s.options.bind);
  s.acceptor = std::make_unique<tcp::acceptor>(s.ioc);
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(s.options.port));
  if (!s.acceptor->open(endpoint.protocol(), ec) &&
      !s.acceptor->set_option(asio::socket_base::reuse_address(true), ec) &&
      !s.acceptor->bind(endpoint, ec) &&
      !s.acceptor->listen(asio::socket_base::max_listen_connections, ec)) {
    s.bound_port = s.acceptor->local_endpoint(ec).port();
  }
  if (ec) {
    throw std::runtime_error("cannot listen on " + s.options.bind + ":" +
                             std::to_string(s.options.port) + ": " + ec.message());
  }
  s.started = true;
  s.accept_thread = std::thread([&s] { s.accept_loop(); });
}

int TlsServer::port() const {
  return impl_->bound_port;
}

void TlsServer::stop() {
  Impl& s = *impl_;
  if (!s.started || s.stopping.exchange(true)) return;
  ::shutdown(s.acceptor->native_handle(), SHUT_RDWR);  // wakes the blocked accept()
  if (s.accept_thread.joinable()) s.accept_thread.join();
  std::list<std::shared_ptr<Connection>> connections;
  {
    std::lock_guard lock(s.mu);
    for (auto& c : s.connections) {
      if (!c->done) ::shutdown(c->fd, SHUT_RDWR);
    }
    connections.swap(s.connections);
  }
  for (auto& c : connections) {
    if (c->thread.joinable()) c->thread.join();
  }
  beast::error_code ignored;
  s.acceptor->close(ignored);
}

}  // namespace orch::fake_kube
