#pragma once
// The frames the toy trainer's ranks exchange over TCP: a fixed 56-byte header, then a payload
// of payload_bytes. Host byte order: every rank of a job runs the same binary on the same kind
// of machine. Kinds:
//   hello    rank -> 0 at rendezvous: rank, world; payload = the rank's node name
//   welcome  0 -> rank once every rank has arrived: world
//   data     one all-reduce: rank -> 0 its tensor, 0 -> rank the sum (same step, same size);
//            loss and flags ride along (0 sends back the sum of losses and the OR of flags)
//   abort    0 -> rank when the job cannot go on; payload = why, as text

#include <cstdint>
#include <string>

#include "examples/toy_trainer/net.h"

namespace toy::wire {

inline constexpr std::uint32_t kMagic = 0x52594f54;  // "TOYR"
inline constexpr std::uint32_t kStopFlag = 1;        // data: this rank got SIGTERM
inline constexpr std::uint64_t kMaxText = 4096;      // hello and abort payloads

enum class Kind : std::uint32_t { hello = 1, welcome = 2, data = 3, abort = 4 };

struct Header {
  std::uint32_t magic = kMagic;
  Kind kind = Kind::data;
  std::int32_t rank = 0;   // the sender
  std::int32_t world = 0;  // the sender's world size
  std::int64_t step = 0;
  double compute_s = 0;  // data: the sender's compute time in this step
  double loss = 0;       // data: the sender's loss (from rank 0: the sum over ranks)
  std::uint32_t flags = 0;
  std::uint32_t reserved = 0;
  std::uint64_t payload_bytes = 0;
};
static_assert(sizeof(Header) == 56, "the header is sent as it is in memory");

// Sends the header (payload_bytes set from n) and n payload bytes before the deadline.
net::IoResult send(int fd, Header h, const void* payload, std::size_t n, net::Deadline deadline);

// Sends an abort frame carrying `why`: best effort, for at most a second.
void send_abort(int fd, int rank, const std::string& why);

// Reads one frame a piece at a time, as the socket delivers it. A data frame's payload goes to
// the buffer given (it must be exactly that size); hello, welcome and abort payloads are text.
class FrameReader {
 public:
  FrameReader() = default;
  FrameReader(void* data, std::size_t bytes) : data_(data), data_bytes_(bytes) {}

  // Reads what the socket has now. A malformed frame is Io::error with EPROTO, and problem()
  // says what was wrong.
  net::IoResult pump(int fd);
  // Waits and reads until the frame is complete or the deadline.
  net::IoResult read(int fd, net::Deadline deadline);

  bool done() const { return got_header_ == sizeof h_ && got_payload_ == payload_size(); }
  const Header& header() const { return h_; }
  const std::string& text() const { return text_; }
  const std::string& problem() const { return problem_; }

 private:
  std::size_t payload_size() const;
  bool check_header();

  Header h_{};
  void* data_ = nullptr;
  std::size_t data_bytes_ = 0;
  std::size_t got_header_ = 0;
  std::size_t got_payload_ = 0;
  std::string text_;
  std::string problem_;
};

}  // namespace toy::wire
