#include "testkit/fake_kube/fake_kube_server.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <ostream>
#include <stdexcept>

#include "testkit/fake_kube/api_routes.h"
#include "testkit/fake_kube/discovery.h"
#include "testkit/fake_kube/hooks.h"
#include "testkit/fake_kube/pod_exec.h"
#include "testkit/fake_kube/rbac.h"
#include "testkit/fake_kube/tls_server.h"

namespace orch::fake_kube {
namespace {

// Remembers the status for the request log.
class LoggingWriter final : public ResponseWriter {
 public:
  explicit LoggingWriter(ResponseWriter& inner) : inner_(inner) {}
  void send(int status, const std::string& type, const std::string& body) override {
    status_ = status;
    inner_.send(status, type, body);
  }
  bool begin_stream(int status, const std::string& type) override {
    status_ = status;
    return inner_.begin_stream(status, type);
  }
  bool write_chunk(std::string_view data) override { return inner_.write_chunk(data); }
  void end_stream() override { inner_.end_stream(); }
  bool client_gone() override { return inner_.client_gone(); }
  std::unique_ptr<WebSocket> accept_websocket(const std::string& protocol) override {
    auto ws = inner_.accept_websocket(protocol);
    if (ws) status_ = 101;
    return ws;
  }
  int status() const { return status_; }

 private:
  ResponseWriter& inner_;
  int status_ = 0;
};

}  // namespace

struct FakeKubeServer::Impl {
  explicit Impl(FakeKubeOptions o)
      : options(std::move(o)), cluster(options.cluster), state(cluster) {}
  FakeKubeOptions options;
  Cluster cluster;
  ApiState state;
  std::unique_ptr<TlsServer> server;
  std::mutex log_mu;
  mutable std::mutex tokens_mu;
  // Extra tokens and when they expire (nullopt: never).
  std::map<std::string, std::optional<std::chrono::system_clock::time_point>> tokens;
  std::atomic<int> refused{0};

  bool authorized(const std::string& header) {
    if (header == "Bearer " + options.token) return true;
    if (header.rfind("Bearer ", 0) != 0) return false;
    std::lock_guard lock(tokens_mu);
    auto it = tokens.find(header.substr(7));
    return it != tokens.end() && (!it->second || std::chrono::system_clock::now() < *it->second);
  }

  void handle(const Request& req, ResponseWriter& out) {
    if (!authorized(req.header("authorization"))) {
      ++refused;
      return send_error(out, ApiError(401, "Unauthorized", "Unauthorized"));
    }
    if (req.method == "POST" && req.path == "/fake/tokens") {
      auto token = req.query.find("token");
      auto ttl = req.query.find("ttl_s");
      if (token == req.query.end() || token->second.empty()) {
        return send_error(out, ApiError(400, "BadRequest", "token= is required"));
      }
      std::optional<std::chrono::system_clock::time_point> expires;
      if (ttl != req.query.end()) {
        expires = std::chrono::system_clock::now() +
                  std::chrono::milliseconds(
                      static_cast<std::int64_t>(std::strtod(ttl->second.c_str(), nullptr) * 1000));
      }
      std::lock_guard lock(tokens_mu);
      tokens[token->second] = expires;
      return out.send(200, "application/json", "{}");
    }
    const std::string address = options.bind + ":" + std::to_string(server->port());
    if (auto d = discovery(req.path, req.header("accept"), address)) {
      return out.send(d->status, d->content_type, d->body);
    }
    if (handle_hook(state, req, out)) return;
    if (handle_access_review(state.forbidden, req, out)) return;
    if (handle_exec(state, req, out)) return;
    if (handle_resource(state, req, out)) return;
    send_not_found_path(out);
  }

  void log(const Request& req, int status) {
    if (!options.request_log) return;
    std::string query;
    for (const auto& [k, v] : req.query) query += (query.empty() ? "?" : "&") + k + "=" + v;
    std::lock_guard lock(log_mu);
    *options.request_log << req.method << " " << req.path << query << " -> " << status
                         << " (accept: " << req.header("accept") << ")" << std::endl;
  }
};

FakeKubeServer::FakeKubeServer(FakeKubeOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

FakeKubeServer::~FakeKubeServer() {
  stop();
}

void FakeKubeServer::start() {
  if (impl_->options.token.empty()) throw std::runtime_error("the fake API server needs a token");
  Impl& s = *impl_;
  TlsServerOptions tls;
  tls.bind = s.options.bind;
  tls.port = s.options.port;
  tls.cert_file = s.options.cert_file;
  tls.key_file = s.options.key_file;
  s.server = std::make_unique<TlsServer>(tls, [&s](const Request& req, ResponseWriter& out) {
    LoggingWriter writer(out);
    s.handle(req, writer);
    s.log(req, writer.status());
  });
  s.server->start();
  s.cluster.start(s.server->port());
}

void FakeKubeServer::stop() {
  if (!impl_->server) return;
  impl_->cluster.store().close_watchers();
  impl_->server->stop();
  impl_->cluster.stop();
}

void FakeKubeServer::accept_token(const std::string& token,
                                  std::optional<std::chrono::system_clock::time_point> expires) {
  std::lock_guard lock(impl_->tokens_mu);
  impl_->tokens[token] = expires;
}

int FakeKubeServer::unauthorized() const {
  return impl_->refused.load();
}

int FakeKubeServer::port() const {
  return impl_->server ? impl_->server->port() : 0;
}

std::string FakeKubeServer::url() const {
  return "https://" + impl_->options.bind + ":" + std::to_string(port());
}

Cluster& FakeKubeServer::cluster() {
  return impl_->cluster;
}

}  // namespace orch::fake_kube
