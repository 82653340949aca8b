// The only server-side file that includes Boost.Beast: keep it that way, it is slow to build.
#include "web/http_server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "web/beast_request.h"
#include "web/router.h"

namespace orch {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

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

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const Dispatch& dispatch)
      : stream_(std::move(socket)), options_(dispatch.options), dispatch_(dispatch) {}

  void run() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_request(); });
  }

 private:
  void read_request() {
    parser_.emplace();
    parser_->body_limit(options_.max_body);
    parser_->header_limit(kHeaderLimit);
    stream_.expires_after(options_.idle_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(const beast::error_code& ec) {
    if (ec == http::error::body_limit) {
      return reply_error(413, "the request body is larger than the limit of " +
                                  std::to_string(options_.max_body) + " bytes");
    }
    if (ec == http::error::header_limit) {
      return reply_error(431, "the request headers are larger than the limit of " +
                                  std::to_string(kHeaderLimit) + " bytes");
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) return close();
    if (ec && is_http_parse_error(ec)) {
      return reply_error(400, "malformed HTTP request: " + ec.message());
    }
    if (ec) return close();  // timeout, reset, shutdown: nobody to answer

    const BeastRequest& request = parser_->get();
    const bool keep_alive = request.keep_alive();
    const unsigned version = request.version();
    HttpRequest plain = to_plain(request);
    beast::error_code peer_ec;
    const auto peer = stream_.socket().remote_endpoint(peer_ec);
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
    asio::post(*lane.pool,
               [self = shared_from_this(), &lane, plain = std::move(plain), keep_alive, version] {
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

  void reply_error(int status, const std::string& detail) {
    send(to_beast(problem_response(status, detail), 11, false), After::drain);
  }

  void send(BeastResponse response, After after) {
    response_ = std::make_unique<BeastResponse>(std::move(response));
    stream_.expires_after(options_.idle_timeout);
    http::async_write(stream_, *response_,
                      [self = shared_from_this(), after](beast::error_code ec, std::size_t) {
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
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kDrainTimeout);
    drained_ = buffer_.size();
    drain();
  }

  void drain() {
    if (drained_ > kDrainLimit) return close();
    stream_.async_read_some(asio::buffer(drain_buffer_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (ec) return self->close();
                              self->drained_ += n;
                              self->drain();
                            });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  const ServerOptions& options_;
  const Dispatch& dispatch_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::unique_ptr<BeastResponse> response_;
  std::array<char, std::size_t{64} * 1024> drain_buffer_{};
  std::size_t drained_ = 0;
};

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

  void accept() {
    acceptor->async_accept(asio::make_strand(*ioc),
                           [this](beast::error_code ec, tcp::socket socket) {
                             if (ec == asio::error::operation_aborted || !acceptor->is_open())
                               return;
                             if (!ec) std::make_shared<Session>(std::move(socket), dispatch)->run();
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
