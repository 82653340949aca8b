#include "examples/toy_trainer/wire.h"

#include <cerrno>

namespace toy::wire {

net::IoResult send(int fd, Header h, const void* payload, std::size_t n, net::Deadline deadline) {
  h.magic = kMagic;
  h.payload_bytes = n;
  if (auto r = net::write_all(fd, &h, sizeof h, deadline); !r.ok()) return r;
  return n == 0 ? net::IoResult{} : net::write_all(fd, payload, n, deadline);
}

void send_abort(int fd, int rank, const std::string& why) {
  Header h;
  h.kind = Kind::abort;
  h.rank = rank;
  const std::string text = why.substr(0, kMaxText);
  send(fd, h, text.data(), text.size(), net::deadline_in(1.0));
}

std::size_t FrameReader::payload_size() const {
  return got_header_ == sizeof h_ ? static_cast<std::size_t>(h_.payload_bytes) : 0;
}

bool FrameReader::check_header() {
  if (h_.magic != kMagic) {
    problem_ = "not a toy_trainer frame (bad magic)";
    return false;
  }
  switch (h_.kind) {
    case Kind::data:
      if (data_ && h_.payload_bytes == data_bytes_) return true;
      problem_ = "a data frame of " + std::to_string(h_.payload_bytes) + " bytes, expected " +
                 std::to_string(data_ ? data_bytes_ : 0) + " (same --dim on every rank?)";
      return false;
    case Kind::hello:
    case Kind::welcome:
    case Kind::abort:
      if (h_.payload_bytes <= kMaxText) {
        text_.resize(static_cast<std::size_t>(h_.payload_bytes));
        return true;
      }
      problem_ = "a text payload of " + std::to_string(h_.payload_bytes) + " bytes";
      return false;
  }
  problem_ = "unknown frame kind " + std::to_string(static_cast<std::uint32_t>(h_.kind));
  return false;
}

net::IoResult FrameReader::pump(int fd) {
  if (got_header_ < sizeof h_) {
    net::IoResult r = net::read_some(fd, &h_, sizeof h_, got_header_);
    if (!r.ok() || got_header_ < sizeof h_) return r;
    if (!check_header()) return {net::Io::error, EPROTO};
  }
  void* dest = h_.kind == Kind::data ? data_ : static_cast<void*>(text_.data());
  return net::read_some(fd, dest, payload_size(), got_payload_);
}

net::IoResult FrameReader::read(int fd, net::Deadline deadline) {
  for (;;) {
    if (net::IoResult r = pump(fd); !r.ok() || done()) return r;
    std::vector<pollfd> p = {{fd, POLLIN, 0}};
    const int ready = net::poll_until(p, deadline);
    if (ready == 0) return {net::Io::timeout, 0};
    if (ready < 0) return {net::Io::error, errno};
  }
}

}  // namespace toy::wire
