// The only server-side file that includes Boost.Beast and Asio SSL: keep it that way, they are
// slow to build.
#include "web/http/http_server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "web/http/beast_request.h"
#include "web/http/problem_response.h"

namespace orch {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

constexpr std::size_t kHeaderLimit = std::size_t{16} * 1024;
// After an error reply we read and discard what the client still sends (so it sees our answer
// instead of a reset), but only this much and only for this long.
constexpr std::size_t kDrainLimit = 64u << 20;
constexpr std::chrono::seconds kDrainTimeout{5};

using BeastResponse = http::response<http::string_body>;

BeastResponse to_beast(const HttpResponse& response, unsigned version, bool keep_alive) {
  BeastResponse out;
  out.version(version);
  // Beast throws on a status outside 100..999; a handler's bad status is a bug, hence 500.
  const bool valid = response.status >= 100 && response.status <= 599;
  out.result(static_cast<unsigned>(valid ? response.status : 500));
  out.set(http::field::server, "orchestrate");
  out.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) out.set(name, value);
  out.body() = response.body;
  out.keep_alive(keep_alive);
  out.prepare_payload();
  return out;
}

bool is_http_parse_error(const beast::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

// A lane's threads and how many of its requests are queued or running.
struct LanePool {
  LaneOptions options;
  std::unique_ptr<asio::thread_pool> pool;
  std::atomic<std::size_t> waiting{0};
};

// What sessions share: the options, the handler, the lanes and how to pick one.
struct Dispatch {
  ServerOptions options;
  Handler handler;
  std::vector<std::unique_ptr<LanePool>> lanes;
  std::unique_ptr<ssl::context> tls;  // null: plain HTTP

  LanePool& lane_for(const HttpRequest& request) const {
    std::size_t index = 0;
    if (options.lane_of) {
      try {
        index = options.lane_of(request);
      } catch (...) {
        index = 0;  // a classifier that throws must not stop the server; lane 0 still answers
      }
    }
    return *lanes[std::min(index, lanes.size() - 1)];
  }

  HttpResponse answer(const HttpRequest& request) const {
    try {
      return handler ? handler(request)
                     : problem_response(500, "the server has no request handler");
    } catch (const std::exception& e) {
      return problem_response(500, std::string("internal error: ") + e.what());
    } catch (...) {
      return problem_response(500, "internal error");
    }
  }
};

// One connection, plain or TLS (Stream is beast::tcp_stream or TlsStream): reads requests,
// runs each on its lane and writes the answers in order.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // buffer: what was read before the session began (the bytes that told TLS from plain).
  // refusal, when not empty, is the 400 every request on this connection gets.
  template <class... StreamArgs>
  Session(const Dispatch& dispatch, beast::flat_buffer buffer, std::string refusal,
          StreamArgs&&... stream_args)
      : stream_(std::forward<StreamArgs>(stream_args)...),
        options_(dispatch.options),
        dispatch_(dispatch),
        buffer_(std::move(buffer)),
        refusal_(std::move(refusal)) {}

  void run() {
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->begin(); });
  }

 private:
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  void begin() {
    if constexpr (kTls) {
      lowest().expires_after(options_.idle_timeout);
      stream_.async_handshake(
          ssl::stream_base::server, buffer_.data(),
          [self = this->shared_from_this()](beast::error_code ec, std::size_t used) {
            if (ec) return self->close();  // not TLS after all, a refused certificate, a timeout
            self->buffer_.consume(used);
            self->read_request();
          });
    } else {
      read_request();
    }
  }

  // The body limit of a request: max_body, or the larger one of its BodyLimit.
  std::size_t limit_of(const BeastRequest& request) const {
    const auto m = request.method_string();
    const auto t = request.target();
    const std::string_view method(m.data(), m.size());
    const std::string_view target(t.data(), t.size());
    for (const BodyLimit& b : options_.body_limits) {
      if (method == b.method && target.substr(0, b.path_prefix.size()) == b.path_prefix) {
        return b.max_body;
      }
    }
    return options_.max_body;
  }

  void read_request() {
    parser_.emplace();
    // The largest limit until the headers say which applies (Beast checks Content-Length
    // against it as the headers end).
    std::size_t largest = options_.max_body;
    for (const BodyLimit& b : options_.body_limits) largest = std::max(largest, b.max_body);
    parser_->body_limit(largest);
    parser_->header_limit(kHeaderLimit);
    lowest().expires_after(options_.idle_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                              self->on_header(ec);
                            });
  }

  // The headers are in: a request whose body could be framed two ways is refused before any
  // of it is read, and the connection closes, so no byte of it is ever read as a request.
  void on_header(const beast::error_code& ec) {
    if (ec) return on_read(ec);
    if (!refusal_.empty()) return reply_error(400, refusal_);
    if (auto refused = framing_refusal(parser_->get())) {
      return reply_error(refused->status, refused->detail);
    }
    const std::size_t limit = limit_of(parser_->get());
    if (const auto length = parser_->content_length(); length && *length > limit) {
      return reply_error(
          413, "the request body is larger than the limit of " + std::to_string(limit) + " bytes");
    }
    parser_->body_limit(limit);
    if (parser_->is_done()) return on_read(ec);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code read_ec, std::size_t) {
                       self->on_read(read_ec);
                     });
  }

  // Beast's own refusals of a Transfer-Encoding (a second one, one beside Content-Length):
  // the same 501 as framing_refusal's.
  bool transfer_encoding_error(const beast::error_code& ec) const {
    if (ec == http::error::bad_transfer_encoding) return true;
    return ec == http::error::bad_content_length &&
           parser_->get().count(http::field::transfer_encoding) > 0;
  }

  void on_read(const beast::error_code& ec) {
    if (ec == http::error::body_limit) {
      // Beast may refuse a Content-Length as the headers end, before on_header: the headers
      // are read by then, so they still say which limit applied.
      return reply_error(413, "the request body is larger than the limit of " +
                                  std::to_string(limit_of(parser_->get())) + " bytes");
    }
    if (ec == http::error::header_limit) {
      return reply_error(431, "the request headers are larger than the limit of " +
                                  std::to_string(kHeaderLimit) + " bytes");
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) return close();
    if (ec && transfer_encoding_error(ec)) {
      return reply_error(501,
                         "the request's Transfer-Encoding and Content-Length headers conflict or "
                         "repeat; this server reads a body framed by Content-Length or by "
                         "\"Transfer-Encoding: chunked\" alone, and closes the connection");
    }
    if (ec && is_http_parse_error(ec)) {
      return reply_error(400, "malformed HTTP request: " + ec.message());
    }
    if (ec) return close();  // timeout, reset, shutdown: nobody to answer

    const BeastRequest& request = parser_->get();
    const bool keep_alive = request.keep_alive();
    const unsigned version = request.version();
    HttpRequest plain = to_plain(request);
    beast::error_code peer_ec;
    const auto peer = lowest().socket().remote_endpoint(peer_ec);
    if (!peer_ec) plain.remote = peer.address().to_string();
    LanePool& lane = dispatch_.lane_for(plain);
    if (lane.waiting.fetch_add(1) >= lane.options.max_waiting) {
      lane.waiting.fetch_sub(1);
      HttpResponse busy = problem_response(
          503, "the server is busy: " + std::to_string(lane.options.max_waiting) + " " +
                   lane.options.name + " requests are waiting; retry shortly");
      busy.headers.emplace_back("Retry-After", "1");
      return reply(busy, version, keep_alive);
    }
    // The handler runs on the lane's threads; the answer goes back through this session's
    // strand, which reads nothing more from the connection until it is written.
    asio::post(*lane.pool, [self = this->shared_from_this(), &lane, plain = std::move(plain),
                            keep_alive, version] {
      HttpResponse response = self->dispatch_.answer(plain);
      lane.waiting.fetch_sub(1);
      asio::post(self->stream_.get_executor(),
                 [self, response = std::move(response), keep_alive, version] {
                   self->reply(response, version, keep_alive);
                 });
    });
  }

  enum class After { read, close, drain };

  // The answer to a request; the connection reads the next one when the client keeps it.
  void reply(const HttpResponse& response, unsigned version, bool keep_alive) {
    send(to_beast(response, version, keep_alive), keep_alive ? After::read : After::close);
  }

  // What the server answers by itself to a request it will not read to its end: the answer
  // says "Connection: close", and nothing after it is parsed as a request; what the client
  // still sends is read and thrown away (drain), so that it sees the answer, not a reset.
  void reply_error(int status, const std::string& detail) {
    send(to_beast(problem_response(status, detail), 11, false), After::drain);
  }

  void send(BeastResponse response, After after) {
    response_ = std::make_unique<BeastResponse>(std::move(response));
    lowest().expires_after(options_.idle_timeout);
    http::async_write(stream_, *response_,
                      [self = this->shared_from_this(), after](beast::error_code ec, std::size_t) {
                        self->response_.reset();
                        if (ec) return self->close();
                        switch (after) {
                          case After::read:
                            return self->read_request();
                          case After::close:
                            return self->close();
                          case After::drain:
                            return self->start_drain();
                        }
                      });
  }

  void start_drain() {
    // Over TLS the stream stays open both ways (a half-closed TCP stream would cut the TLS
    // records short); the answer's Content-Length tells the client it is complete.
    if constexpr (!kTls) {
      beast::error_code ignored;
      lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
    lowest().expires_after(kDrainTimeout);
    drained_ = buffer_.size();
    drain();
  }

  void drain() {
    if (drained_ > kDrainLimit) return close();
    stream_.async_read_some(asio::buffer(drain_buffer_),
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (ec) return self->close();
                              self->drained_ += n;
                              self->drain();
                            });
  }

  void close() {
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().socket().close(ignored);
  }

  Stream stream_;
  const ServerOptions& options_;
  const Dispatch& dispatch_;
  beast::flat_buffer buffer_;
  std::string refusal_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::unique_ptr<BeastResponse> response_;
  std::array<char, std::size_t{64} * 1024> drain_buffer_{};
  std::size_t drained_ = 0;
};

// The first bytes of a connection to a TLS server: a TLS ClientHello starts a TLS session;
// anything else is plain HTTP, answered with a 400 that says to use https.
class Detector : public std::enable_shared_from_this<Detector> {
 public:
  Detector(tcp::socket socket, const Dispatch& dispatch)
      : stream_(std::move(socket)), dispatch_(dispatch) {}

  void run() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      self->stream_.expires_after(self->dispatch_.options.idle_timeout);
      beast::async_detect_ssl(self->stream_, self->buffer_,
                              [self](beast::error_code ec, bool tls) { self->on_detect(ec, tls); });
    });
  }

 private:
  void on_detect(const beast::error_code& ec, bool tls) {
    if (ec) {
      beast::error_code ignored;
      stream_.socket().close(ignored);
      return;
    }
    if (tls) {
      std::make_shared<Session<TlsStream>>(dispatch_, std::move(buffer_), "", std::move(stream_),
                                           *dispatch_.tls)
          ->run();
      return;
    }
    std::make_shared<Session<beast::tcp_stream>>(
        dispatch_, std::move(buffer_), "this server speaks HTTPS only: use an https:// URL for it",
        std::move(stream_))
        ->run();
  }

  beast::tcp_stream stream_;
  const Dispatch& dispatch_;
  beast::flat_buffer buffer_;
};

// The TLS context of a server, from its certificate chain and key files.
Result<std::unique_ptr<ssl::context>> server_tls_context(const ServerOptions& o) {
  if (o.tls_cert_file.empty() || o.tls_key_file.empty()) {
    return make_error(ErrorKind::invalid,
                      "TLS needs both a certificate and a key file (server.tls: {cert, key})");
  }
  for (const std::string* file : {&o.tls_cert_file, &o.tls_key_file}) {
    if (std::FILE* f = std::fopen(file->c_str(), "rb")) {
      std::fclose(f);
    } else {
      return make_error(ErrorKind::io,
                        "cannot read the TLS " +
                            std::string(file == &o.tls_cert_file ? "certificate" : "private key") +
                            " " + *file + ": " + std::strerror(errno));
    }
  }
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::single_dh_use);
  beast::error_code ec;
  ctx->use_certificate_chain_file(o.tls_cert_file, ec);
  if (ec) {
    return make_error(ErrorKind::invalid, "cannot use " + o.tls_cert_file +
                                              " as the TLS certificate: " + ec.message() +
                                              " (expected a PEM certificate chain)");
  }
  ctx->use_private_key_file(o.tls_key_file, ssl::context::pem, ec);
  const bool mismatch =
      ec ? ec.category() == asio::error::get_ssl_category() &&
               ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == X509_R_KEY_VALUES_MISMATCH
         : SSL_CTX_check_private_key(ctx->native_handle()) != 1;
  ERR_clear_error();
  if (mismatch) {
    return make_error(ErrorKind::invalid, "the TLS private key " + o.tls_key_file +
                                              " does not belong to the certificate " +
                                              o.tls_cert_file);
  }
  if (ec) {
    return make_error(ErrorKind::invalid, "cannot use " + o.tls_key_file +
                                              " as the TLS private key: " + ec.message() +
                                              " (expected an unencrypted PEM key)");
  }
  return ctx;
}

}  // namespace

struct HttpServer::Impl {
  Dispatch dispatch;
  ServerOptions& options = dispatch.options;
  // Owned through pointers so that stop() can destroy them: destroying the io_context
  // destroys every pending session, which closes every client connection at once.
  std::unique_ptr<asio::io_context> ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  int bound_port = 0;
  bool started = false;

  void start_session(tcp::socket socket) {
    if (dispatch.tls) {
      std::make_shared<Detector>(std::move(socket), dispatch)->run();
    } else {
      std::make_shared<Session<beast::tcp_stream>>(dispatch, beast::flat_buffer(), "",
                                                   std::move(socket))
          ->run();
    }
  }

  void accept() {
    acceptor->async_accept(asio::make_strand(*ioc),
                           [this](beast::error_code ec, tcp::socket socket) {
                             if (ec == asio::error::operation_aborted || !acceptor->is_open())
                               return;
                             if (!ec) start_session(std::move(socket));
                             accept();
                           });
  }
};

HttpServer::HttpServer(ServerOptions options, Handler handler) : impl_(std::make_unique<Impl>()) {
  impl_->dispatch.options = std::move(options);
  impl_->dispatch.handler = std::move(handler);
}

HttpServer::~HttpServer() {
  stop();
}

Result<void> HttpServer::start() {
  Impl& s = *impl_;
  if (s.started) return make_error(ErrorKind::conflict, "the HTTP server is already started");
  beast::error_code ec;
  const auto address = asio::ip::make_address(s.options.bind, ec);
  if (ec) {
    return make_error(ErrorKind::invalid,
                      "bad bind address '" + s.options.bind + "': expected an IP address");
  }
  if (s.options.lanes.empty()) {
    return make_error(ErrorKind::invalid, "the HTTP server needs at least one lane");
  }
  if (s.options.port < 0 || s.options.port > 65535) {
    return make_error(ErrorKind::invalid,
                      "bad port " + std::to_string(s.options.port) + ": expected 0 to 65535");
  }
  s.dispatch.tls.reset();
  if (!s.options.tls_cert_file.empty() || !s.options.tls_key_file.empty()) {
    auto tls = server_tls_context(s.options);
    if (!tls) return tls.error();
    s.dispatch.tls = std::move(*tls);
  }
  s.ioc = std::make_unique<asio::io_context>(std::max(1, s.options.io_threads));
  s.acceptor = std::make_unique<tcp::acceptor>(*s.ioc);
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(s.options.port));
  const std::string where = s.options.bind + ":" + std::to_string(s.options.port);
  if (!s.acceptor->open(endpoint.protocol(), ec) &&
      !s.acceptor->set_option(asio::socket_base::reuse_address(true), ec) &&
      !s.acceptor->bind(endpoint, ec) &&
      !s.acceptor->listen(asio::socket_base::max_listen_connections, ec)) {
    s.bound_port = s.acceptor->local_endpoint(ec).port();
  }
  if (ec) {
    s.acceptor.reset();
    s.ioc.reset();
    return make_error(ErrorKind::io, "cannot listen on " + where + ": " + ec.message());
  }
  s.started = true;
  s.dispatch.lanes.clear();
  for (const LaneOptions& o : s.options.lanes) {
    auto lane = std::make_unique<LanePool>();
    lane->options = o;
    lane->options.max_waiting = std::max<std::size_t>(1, o.max_waiting);
    lane->pool =
        std::make_unique<asio::thread_pool>(static_cast<std::size_t>(std::max(1, o.threads)));
    s.dispatch.lanes.push_back(std::move(lane));
  }
  s.accept();
  for (int i = 0; i < std::max(1, s.options.io_threads); ++i) {
    s.threads.emplace_back([ioc = s.ioc.get()] {
      // Sessions catch their own errors; this loop only keeps a thread alive if one slips.
      for (;;) {
        try {
          ioc->run();
          return;
        } catch (...) {
        }
      }
    });
  }
  return Ok{};
}

int HttpServer::port() const {
  return impl_->bound_port;
}

void HttpServer::stop() {
  Impl& s = *impl_;
  if (!s.started) return;
  s.started = false;
  s.ioc->stop();
  for (auto& thread : s.threads) {
    if (thread.joinable()) thread.join();
  }
  s.threads.clear();
  // Handlers still running finish (a command waits a bounded time) and post their answers to
  // the stopped io_context, which drops them with the sessions below.
  for (auto& lane : s.dispatch.lanes) {
    lane->pool->stop();
    lane->pool->join();
  }
  s.dispatch.lanes.clear();
  beast::error_code ignored;
  s.acceptor->close(ignored);
  s.acceptor.reset();
  s.ioc.reset();
}

}  // namespace orch
