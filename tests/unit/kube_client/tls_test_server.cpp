#include "tests/unit/kube_client/tls_test_server.h"

#include "testkit/fake_kube/test_pki.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace orch::kube_test {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using TlsSocket = ssl::stream<tcp::socket>;

struct CertDir {
  Certs certs;
  std::string error;
  ~CertDir() {
    std::error_code ignored;
    if (!certs.dir.empty()) std::filesystem::remove_all(certs.dir, ignored);
  }
};

CertDir make_certs() {
  CertDir out;
  std::string tmpl = (std::filesystem::temp_directory_path() / "kube-client-test-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    out.error = "mkdtemp failed";
    return out;
  }
  const std::string dir = tmpl;
  // ca signs server, named and client; the unrelated other-ca signs rogue.
  using fake_kube::CertFiles;
  try {
    const CertFiles ca = fake_kube::make_test_ca(dir, "ca", "kube-test-ca", 3);
    const CertFiles other_ca = fake_kube::make_test_ca(dir, "other-ca", "unrelated-ca", 3);
    const auto cert = [&](const char* stem, const char* cn, const CertFiles& by,
                          const char* extensions) {
      return fake_kube::make_test_cert(dir, stem, cn, by, extensions, 3);
    };
    const CertFiles server =
        cert("server", "kube-apiserver", ca,
             "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
    const CertFiles named = cert("named", "kube-apiserver", ca,
                                 "subjectAltName=DNS:kube.internal\nextendedKeyUsage=serverAuth\n");
    const CertFiles client = cert("client", "kube-admin", ca, "extendedKeyUsage=clientAuth\n");
    const CertFiles rogue = cert("rogue", "kube-admin", other_ca, "extendedKeyUsage=clientAuth\n");
    out.certs = Certs{dir,         ca.cert,    ca.key,     other_ca.cert, other_ca.key,
                      server.cert, server.key, named.cert, named.key,     client.cert,
                      client.key,  rogue.cert, rogue.key};
  } catch (const std::exception& e) {
    out.error = e.what();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return out;
}

std::string status_json(int code, const std::string& reason, const std::string& message) {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" +
         message + R"(","reason":")" + reason + R"(","code":)" + std::to_string(code) + "}";
}

bool write_raw(TlsSocket& stream, const std::string& bytes) {
  beast::error_code ec;
  asio::write(stream, asio::buffer(bytes), ec);
  return !ec;
}

std::string chunk(const std::string& data) {
  std::ostringstream out;
  out << std::hex << data.size() << "\r\n" << data << "\r\n";
  return out.str();
}

constexpr const char* kChunkedHead =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

std::string client_cn(TlsSocket& stream) {
  SSL* ssl_handle = stream.native_handle();
  X509* peer = SSL_get1_peer_certificate(ssl_handle);
  if (peer == nullptr) return "";
  std::string cn;
  if (SSL_get_verify_result(ssl_handle) == X509_V_OK) {
    char text[256] = {};
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, text, sizeof text) >
        0) {
      cn = text;
    }
  }
  X509_free(peer);
  return cn;
}

}  // namespace

const Certs& certs(std::string* error) {
  static const CertDir dir = make_certs();
  if (error != nullptr) *error = dir.error;
  return dir.certs;
}

struct TlsTestServer::State {
  asio::io_context ioc;
  ssl::context ctx{ssl::context::tls_server};
  int listen_fd = -1;
};

TlsTestServer::TlsTestServer(Options options)
    : options_(std::move(options)), state_(std::make_unique<State>()) {
  state_->ctx.use_certificate_chain_file(options_.cert_file);
  state_->ctx.use_private_key_file(options_.key_file, ssl::context::pem);
  if (!options_.client_ca_file.empty()) {
    state_->ctx.load_verify_file(options_.client_ca_file);
    state_->ctx.set_verify_mode(ssl::verify_peer);  // asked for, not required
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(options_.port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0) {
    ::close(fd);
    throw std::runtime_error("test server: cannot listen on port " + std::to_string(options_.port));
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  state_->listen_fd = fd;
  accept_thread_ = std::thread([this] { accept_loop(); });
}

TlsTestServer::~TlsTestServer() {
  stop();
}

void TlsTestServer::stop() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    stop_cv_.notify_all();
    ::shutdown(state_->listen_fd, SHUT_RDWR);  // wakes accept()
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  accept_thread_.join();
  std::vector<std::thread> threads;
  {
    const std::lock_guard lock(mutex_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
  ::close(state_->listen_fd);
}

void TlsTestServer::accept_loop() {
  for (;;) {
    const int fd = ::accept4(state_->listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;
    }
    const std::lock_guard lock(mutex_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    ++connections_;
    open_fds_.insert(fd);
    threads_.emplace_back([this, fd] { serve(fd); });
  }
}

void TlsTestServer::serve(int fd) {
  TlsSocket stream(tcp::socket(state_->ioc, tcp::v4(), fd), state_->ctx);
  // Declared after `stream`, so it runs first: the fd leaves the set before it is closed.
  struct Unregister {
    TlsTestServer* self;
    int fd;
    ~Unregister() {
      const std::lock_guard lock(self->mutex_);
      self->open_fds_.erase(fd);
    }
  } unregister{this, fd};

  beast::error_code ec;
  stream.handshake(ssl::stream_base::server, ec);
  if (ec) return;
  const std::string cn = client_cn(stream);
  const auto wait_for_stop = [&](std::chrono::milliseconds d) {
    std::unique_lock lock(mutex_);
    return stop_cv_.wait_for(lock, d, [&] { return stopping_; });
  };

  beast::flat_buffer buffer;
  for (;;) {
    http::request<http::string_body> req;
    http::read(stream, buffer, req, ec);
    if (ec) return;
    ++requests_;
    const std::string target(req.target());
    const std::string path = target.substr(0, target.find('?'));
    http::response<http::string_body> res{http::status::ok, 11};
    res.set(http::field::content_type, "application/json");
    res.keep_alive(req.keep_alive());

    std::string auth;
    if (req[http::field::authorization] == "Bearer " + options_.token) {
      auth = "token";
    } else if (cn == "kube-admin") {
      auth = "cert:" + cn;
    }
    if (path != "/healthz" && auth.empty()) {
      res.result(http::status::unauthorized);
      res.body() = status_json(401, "Unauthorized", "Unauthorized");
      res.prepare_payload();
      http::write(stream, res, ec);
      if (ec) return;
      continue;
    }

    if (path == "/healthz") {
      res.set(http::field::content_type, "text/plain");
      res.body() = "ok";
    } else if (path == "/api/v1/namespaces/default/pods") {
      res.body() = R"({"kind":"PodList","apiVersion":"v1","items":[],"auth":")" + auth + "\"}";
    } else if (path.rfind("/echo", 0) == 0) {
      res.set(http::field::content_type, "text/plain");
      res.body() = "method=" + std::string(req.method_string()) + "\ntarget=" + target +
                   "\ncontent-type=" + std::string(req[http::field::content_type]) +
                   "\nbody=" + req.body();
    } else if (path == "/close") {
      res.keep_alive(false);
      res.body() = "{}";
    } else if (path == "/drop-later") {
      res.body() = "{}";
      res.prepare_payload();
      http::write(stream, res, ec);
      wait_for_stop(std::chrono::milliseconds(150));
      return;  // closes with whatever the client sent meanwhile unread: a reset
    } else if (path == "/hang") {
      wait_for_stop(std::chrono::seconds(60));
      return;
    } else if (path == "/watch/split") {
      const std::vector<std::string> pieces = {"{\"type\":\"ADDED\",\"n\":1}\n{\"type\":\"MODI",
                                               "FIED\",\"n\":2}\n",
                                               "{\"type\":\"DELETED\",",
                                               "\"n\":3}\n{\"type\":\"ADDED\",\"n\":4}\r\n",
                                               "\n",
                                               "{\"type\":\"ADDED\",\"n\":5}"};
      if (!write_raw(stream, kChunkedHead)) return;
      for (const auto& piece : pieces) {
        if (!write_raw(stream, chunk(piece)) || wait_for_stop(std::chrono::milliseconds(20))) {
          return;
        }
      }
      if (!write_raw(stream, "0\r\n\r\n")) return;
      continue;
    } else if (path == "/watch/endless") {
      if (!write_raw(stream, kChunkedHead)) return;
      for (int n = 1;; ++n) {
        const std::string line = R"({"type":"ADDED","n":)" + std::to_string(n) + "}\n";
        if (!write_raw(stream, chunk(line)) || wait_for_stop(std::chrono::milliseconds(20))) {
          return;
        }
      }
    } else if (path == "/watch/quiet") {
      if (!write_raw(stream, kChunkedHead)) return;
      wait_for_stop(std::chrono::seconds(60));
      return;
    } else if (path == "/watch/break") {
      if (!write_raw(stream, kChunkedHead)) return;
      write_raw(stream, chunk("{\"type\":\"ADDED\",\"n\":1}\n"));
      wait_for_stop(std::chrono::milliseconds(50));
      ::shutdown(fd, SHUT_RDWR);  // no last chunk, no TLS close_notify
      return;
    } else if (path == "/watch/gone") {
      res.result(http::status::gone);
      res.body() = status_json(410, "Expired", "too old resource version: 1 (42)");
    } else {
      res.result(http::status::not_found);
      res.body() = status_json(404, "NotFound", "the server could not find the requested resource");
    }
    res.prepare_payload();
    http::write(stream, res, ec);
    if (ec || !res.keep_alive()) return;
  }
}

SilentListener::SilentListener() {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 16) != 0) {
    throw std::runtime_error("silent listener: cannot listen");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
}

SilentListener::~SilentListener() {
  ::close(fd_);
}

int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (!bound) throw std::runtime_error("closed_port: cannot bind");
  return ntohs(addr.sin_port);
}

}  // namespace orch::kube_test
