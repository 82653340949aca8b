#include "tests/unit/agent/push_test_server.h"

#include <netinet/in.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace orch::testing {
namespace {

SSL_CTX* ctx_of(void* p) {
  return static_cast<SSL_CTX*>(p);
}

std::string header(const std::string& head, const std::string& name) {
  std::string lower = head;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t at = lower.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  const size_t from = at + name.size() + 4;
  return head.substr(from, head.find("\r\n", from) - from);
}

}  // namespace

PushTestServer::PushTestServer(const std::string& cert_file, const std::string& key_file) {
  // An agent that hangs up while we answer must not kill the test process.
  signal(SIGPIPE, SIG_IGN);
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    SSL_CTX_free(ctx);
    throw std::runtime_error("push test server: cannot load " + cert_file);
  }
  ctx_ = ctx;
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    throw std::runtime_error("push test server: cannot listen");
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { accept_loop(); });
}

PushTestServer::~PushTestServer() {
  stop();
  SSL_CTX_free(ctx_of(ctx_));
}

void PushTestServer::stop() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  accept_thread_.join();
  std::vector<std::thread> threads;
  {
    const std::lock_guard lock(mutex_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
  ::close(listen_fd_);
}

void PushTestServer::answer_next(int n, int status) {
  const std::lock_guard lock(mutex_);
  fail_left_ = n;
  fail_status_ = status;
}

std::vector<PushTestServer::Request> PushTestServer::requests() {
  const std::lock_guard lock(mutex_);
  return requests_;
}

std::vector<nlohmann::json> PushTestServer::stored() {
  const std::lock_guard lock(mutex_);
  return stored_;
}

void PushTestServer::accept_loop() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;
    }
    const std::lock_guard lock(mutex_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    open_fds_.insert(fd);
    threads_.emplace_back([this, fd] { serve(fd); });
  }
}

PushTestServer::Request PushTestServer::handle(const std::string& head, const std::string& body,
                                               std::string* answer) {
  Request r;
  r.target = head.substr(5, head.find(' ', 5) - 5);
  r.authorization = header(head, "authorization");
  r.content_type = header(head, "content-type");
  r.body = nlohmann::json::parse(body, nullptr, false);
  if (r.body.is_discarded()) r.body = nullptr;
  const std::lock_guard lock(mutex_);
  if (fail_left_ > 0) {
    --fail_left_;
    r.status = fail_status_;
    *answer = R"({"error":"told to answer )" + std::to_string(fail_status_) + "\"}";
  } else {
    r.status = 200;
    int stored = 0;
    if (r.body.is_object() && r.body["records"].is_array()) {
      for (const auto& record : r.body["records"]) {
        if (record.value("seq", 0) <= last_seq_) continue;  // a retried record: held already
        last_seq_ = record["seq"];
        stored_.push_back(record);
        ++stored;
      }
    }
    *answer = R"({"stored":)" + std::to_string(stored) + R"(,"last_seq":)" +
              std::to_string(last_seq_) + "}";
  }
  requests_.push_back(r);
  return r;
}

void PushTestServer::serve(int fd) {
  SSL* ssl = SSL_new(ctx_of(ctx_));
  SSL_set_fd(ssl, fd);
  if (SSL_accept(ssl) != 1) {
    ++handshakes_failed_;
  } else {
    std::string raw;
    char buf[16384];
    for (;;) {
      size_t head_end = raw.find("\r\n\r\n");
      size_t length = 0;
      if (head_end != std::string::npos) {
        length = std::stoul("0" + header(raw.substr(0, head_end + 2), "content-length"));
      }
      if (head_end == std::string::npos || raw.size() < head_end + 4 + length) {
        const int n = SSL_read(ssl, buf, sizeof buf);
        if (n <= 0) break;
        raw.append(buf, static_cast<size_t>(n));
        continue;
      }
      std::string answer;
      const Request r =
          handle(raw.substr(0, head_end + 2), raw.substr(head_end + 4, length), &answer);
      raw.erase(0, head_end + 4 + length);
      const std::string reply = "HTTP/1.1 " + std::to_string(r.status) +
                                " X\r\nContent-Type: application/json\r\nContent-Length: " +
                                std::to_string(answer.size()) + "\r\n\r\n" + answer;
      if (SSL_write(ssl, reply.data(), static_cast<int>(reply.size())) <= 0) break;
    }
  }
  SSL_free(ssl);
  const std::lock_guard lock(mutex_);
  open_fds_.erase(fd);
  ::close(fd);
}

}  // namespace orch::testing
