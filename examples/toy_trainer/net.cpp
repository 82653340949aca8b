#include "examples/toy_trainer/net.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace toy::net {

Deadline deadline_in(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}

int Fd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string describe(const IoResult& r) {
  switch (r.status) {
    case Io::ok:
      return "ok";
    case Io::eof:
      return "closed the connection";
    case Io::timeout:
      return "timed out";
    case Io::error:
      break;
  }
  if (r.err == EPIPE) return "closed the connection";
  return std::string("connection failed: ") + std::strerror(r.err);
}

int poll_until(std::vector<pollfd>& fds, Deadline deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    const int ms = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 3'600'000));
    const int n = ::poll(fds.data(), fds.size(), ms);
    if (n > 0) return n;
    if (n == 0 && (ms == 0 || Clock::now() >= deadline)) return 0;
    if (n < 0 && errno != EINTR) return -1;
  }
}

IoResult read_some(int fd, void* data, std::size_t n, std::size_t& done) {
  auto* p = static_cast<char*>(data);
  while (done < n) {
    const ssize_t k = ::recv(fd, p + done, n - done, 0);
    if (k > 0) {
      done += static_cast<std::size_t>(k);
    } else if (k == 0) {
      return {Io::eof, 0};
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return {};
    } else if (errno != EINTR) {
      return {Io::error, errno};
    }
  }
  return {};
}

IoResult write_some(int fd, const void* data, std::size_t n, std::size_t& done) {
  const auto* p = static_cast<const char*>(data);
  while (done < n) {
    const ssize_t k = ::send(fd, p + done, n - done, MSG_NOSIGNAL);
    if (k >= 0) {
      done += static_cast<std::size_t>(k);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return {};
    } else if (errno != EINTR) {
      return {Io::error, errno};
    }
  }
  return {};
}

namespace {

template <typename Step>
IoResult move_all(int fd, short events, Deadline deadline, std::size_t n, Step step) {
  std::size_t done = 0;
  for (;;) {
    if (IoResult r = step(done); !r.ok() || done == n) return r;
    std::vector<pollfd> p = {{fd, events, 0}};
    const int ready = poll_until(p, deadline);
    if (ready == 0) return {Io::timeout, 0};
    if (ready < 0) return {Io::error, errno};
  }
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // best effort
}

std::string numeric_address(const sockaddr* sa, socklen_t len) {
  char host[NI_MAXHOST] = {}, port[NI_MAXSERV] = {};
  if (::getnameinfo(sa, len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  return std::string(host) + ":" + port;
}

// A socket bound to the wildcard address of `family` and listening; errno set on failure.
Fd listen_on(int family, int port, int backlog, const char*& failed) {
  Fd s(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  failed = "socket";
  if (!s) return {};
  int one = 1, zero = 0;
  ::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (family == AF_INET6) {
    ::setsockopt(s.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_any;
    a->sin6_port = htons(static_cast<std::uint16_t>(port));
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_ANY);
    a->sin_port = htons(static_cast<std::uint16_t>(port));
    len = sizeof *a;
  }
  failed = "bind";
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) return {};
  failed = "listen";
  if (::listen(s.get(), backlog) != 0) return {};
  return s;
}

// Connects one resolved address before the deadline; errno set on failure.
Fd connect_one(const addrinfo* ai, Deadline deadline) {
  Fd s(::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!s) return {};
  if (::connect(s.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return {};
    std::vector<pollfd> p = {{s.get(), POLLOUT, 0}};
    const int ready = poll_until(p, deadline);
    if (ready <= 0) {
      if (ready == 0) errno = ETIMEDOUT;
      return {};
    }
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return {};
    if (err != 0) {
      errno = err;
      return {};
    }
  }
  set_nodelay(s.get());
  return s;
}

}  // namespace

IoResult write_all(int fd, const void* data, std::size_t n, Deadline deadline) {
  return move_all(fd, POLLOUT, deadline, n,
                  [&](std::size_t& done) { return write_some(fd, data, n, done); });
}

IoResult read_all(int fd, void* data, std::size_t n, Deadline deadline) {
  return move_all(fd, POLLIN, deadline, n,
                  [&](std::size_t& done) { return read_some(fd, data, n, done); });
}

Fd listen_tcp(int port, int backlog, std::string& error) {
  const char* failed = "socket";
  Fd s = listen_on(AF_INET6, port, backlog, failed);
  // No IPv6 here (or it is turned off): IPv4 alone. A port in use is in use for both.
  if (!s && errno != EADDRINUSE) s = listen_on(AF_INET, port, backlog, failed);
  if (!s)
    error = std::string(failed) + " on port " + std::to_string(port) + ": " + std::strerror(errno);
  return s;
}

Fd connect_tcp(const std::string& host, int port, Deadline deadline, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list); rc != 0) {
    error = "cannot resolve " + host + ": " + ::gai_strerror(rc);
    return {};
  }
  Fd s;
  error = "no address for " + host;
  for (const addrinfo* ai = list; ai && !s; ai = ai->ai_next) {
    s = connect_one(ai, deadline);
    if (!s) error = std::strerror(errno);
  }
  ::freeaddrinfo(list);
  return s;
}

Fd accept_tcp(int listen_fd, std::string& peer) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  Fd s(::accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC));
  if (!s) return {};
  set_nodelay(s.get());
  peer = numeric_address(reinterpret_cast<sockaddr*>(&ss), len);
  return s;
}

}  // namespace toy::net
