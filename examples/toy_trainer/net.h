#pragma once
// TCP with deadlines for the toy trainer's rendezvous and all-reduce. Every socket is
// non-blocking and every wait is a poll() bounded by a deadline, so a dead peer shows at once
// (EOF, ECONNRESET) and a silent one when the deadline passes. EINTR restarts a wait (a SIGTERM
// is handled between steps). Sends use MSG_NOSIGNAL: a closed peer is an error, not SIGPIPE.

#include <poll.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace toy::net {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

Deadline deadline_in(double seconds);

// An owned file descriptor, closed when it goes.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release();
  void reset();

 private:
  int fd_ = -1;
};

enum class Io { ok, eof, timeout, error };

struct IoResult {
  Io status = Io::ok;
  int err = 0;  // errno, for Io::error
  bool ok() const { return status == Io::ok; }
};

// What went wrong, to follow a peer's name: "closed the connection", "timed out",
// "Connection reset by peer".
std::string describe(const IoResult& r);

// poll() until something is ready or the deadline: the count ready, 0 at the deadline.
int poll_until(std::vector<pollfd>& fds, Deadline deadline);

// Moves bytes [done, n) as far as the socket allows now, without waiting. EAGAIN is ok.
IoResult read_some(int fd, void* data, std::size_t n, std::size_t& done);
IoResult write_some(int fd, const void* data, std::size_t n, std::size_t& done);

// All n bytes, waiting at most until the deadline.
IoResult write_all(int fd, const void* data, std::size_t n, Deadline deadline);
IoResult read_all(int fd, void* data, std::size_t n, Deadline deadline);

// A listening socket on every local address (IPv6 dual-stack, else IPv4), SO_REUSEADDR.
// Invalid Fd on failure, with `error` saying which call failed and why.
Fd listen_tcp(int port, int backlog, std::string& error);

// One attempt to connect to host:port (each address it resolves to), until the deadline.
Fd connect_tcp(const std::string& host, int port, Deadline deadline, std::string& error);

// The next pending connection, non-blocking, and its peer's "address:port"; invalid if none.
Fd accept_tcp(int listen_fd, std::string& peer);

}  // namespace toy::net
