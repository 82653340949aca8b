#include "bench/http_load.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <mutex>
#include <thread>

#include "bench/bench_util.h"

namespace orch::bench {
namespace {

// Set once before the load starts (set_bearer_token), read by every client thread after.
std::string& bearer() {
  static std::string token;
  return token;
}

}  // namespace

void set_bearer_token(std::string token) {
  bearer() = std::move(token);
}

namespace {

// One keep-alive connection; reconnects after an error.
class Connection {
 public:
  explicit Connection(int port) : port_(port) {}
  ~Connection() { close_fd(); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The status of the answer (0: none) and its body.
  int exchange(const LoadRequest& r, std::string& body, std::string& error) {
    if (fd_ < 0 && !connect_fd(error)) return 0;
    std::string wire = r.method + " " + r.target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    const std::string& token = r.token.empty() ? bearer() : r.token;
    if (!token.empty()) wire += "Authorization: Bearer " + token + "\r\n";
    if (!r.body.empty() || r.method == "POST") {
      wire += "Content-Type: " + r.content_type +
              "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\n";
    }
    wire += "\r\n" + r.body;
    if (!send_all(wire)) return fail("send failed", error);
    return read_answer(body, error);
  }

 private:
  bool connect_fd(std::string& error) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return fail("socket failed", error), false;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{10, 0};  // a server that stops answering is an error, not a hang
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      return fail("connect failed", error), false;
    }
    buffer_.clear();
    return true;
  }

  bool send_all(const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  bool fill() {
    char chunk[16384];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int read_answer(std::string& body, std::string& error) {
    std::size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return fail("no answer (timeout or reset)", error);
    }
    std::string head = buffer_.substr(0, end);
    for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const int status = std::atoi(head.c_str() + head.find(' ') + 1);
    std::size_t length = 0;
    if (auto at = head.find("content-length:"); at != std::string::npos) {
      length = std::strtoull(head.c_str() + at + 15, nullptr, 10);
    }
    while (buffer_.size() < end + 4 + length) {
      if (!fill()) return fail("answer cut short", error);
    }
    body = buffer_.substr(end + 4, length);
    buffer_.erase(0, end + 4 + length);
    if (head.find("connection: close") != std::string::npos) close_fd();
    return status;
  }

  int fail(const char* what, std::string& error) {
    error = what;
    close_fd();
    return 0;
  }

  void close_fd() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  const int port_;
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace

LoadResult run_load(int port, int clients, double seconds, int max_per_client,
                    const std::function<LoadRequest(int, int)>& make) {
  LoadResult total;
  std::mutex mu;
  std::atomic<bool> stop{false};
  const auto t0 = SteadyClock::now();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(clients));
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      Connection conn(port);
      LoadResult mine;
      std::string body, error;
      for (int i = 0; i < max_per_client && !stop; ++i) {
        const LoadRequest request = make(c, i);
        const auto start = SteadyClock::now();
        const int status = conn.exchange(request, body, error);
        const double ms = seconds_since(start) * 1000.0;
        if (status >= 200 && status < 300) {
          ++mine.requests;
          mine.latency_ms.push_back(ms);
        } else {
          ++mine.errors;
          if (mine.first_error.empty()) {
            mine.first_error = status ? "HTTP " + std::to_string(status) + ": " + body : error;
          }
        }
        if (seconds_since(t0) >= seconds) stop = true;
      }
      std::lock_guard<std::mutex> lock(mu);
      total.requests += mine.requests;
      total.errors += mine.errors;
      if (total.first_error.empty()) total.first_error = mine.first_error;
      total.latency_ms.insert(total.latency_ms.end(), mine.latency_ms.begin(),
                              mine.latency_ms.end());
    });
  }
  for (auto& t : threads) t.join();
  total.seconds = seconds_since(t0);
  return total;
}

int http_once(int port, const LoadRequest& request, std::string* body) {
  Connection conn(port);
  std::string answer, error;
  const int status = conn.exchange(request, answer, error);
  if (body) *body = status ? answer : error;
  return status;
}

}  // namespace orch::bench
