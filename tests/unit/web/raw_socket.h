#pragma once
// A raw client socket to 127.0.0.1, for what http_request will not send: garbage, idle
// connections, requests framed two ways, several requests in one write.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace orch::testing {

class RawSocket {
 public:
  explicit RawSocket(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      throw std::runtime_error("connect failed");
    }
    timeval tv{5, 0};  // no test may hang on a read
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~RawSocket() { ::close(fd_); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  void send(const std::string& data) {
    ASSERT_EQ(::send(fd_, data.data(), data.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(data.size()));
  }
  // Everything until the peer closes (or 5 s pass: then closed() is false).
  std::string read_all() {
    std::string out;
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) {
        closed_ = n == 0;
        return out;
      }
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }
  // Whether the last read_all ended because the peer closed the connection (EOF), not a timeout
  // or a reset.
  bool closed() const { return closed_; }
  // Reads until `count` occurrences of needle were seen.
  std::string read_until(const std::string& needle, int count) {
    std::string out;
    char buffer[4096];
    while (true) {
      int seen = 0;
      for (auto pos = out.find(needle); pos != std::string::npos; pos = out.find(needle, pos + 1)) {
        ++seen;
      }
      if (seen >= count) return out;
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) return out;
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  bool closed_ = false;
};

}  // namespace orch::testing
