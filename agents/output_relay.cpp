// See output_relay.h.
#include "agents/output_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "agents/agent_clock.h"

namespace orch::agent {
namespace {

constexpr size_t kReadSize = size_t{64} * 1024;
constexpr int kMaxReadsPerPump = 64;

}  // namespace

OutputRelay::OutputRelay(int from, int to, bool whole_lines, std::string tag)
    : from_(from), to_(to), whole_lines_(whole_lines), holder_(whole_lines ? std::move(tag) : "") {
  int flags = fcntl(from_, F_GETFL);
  if (flags >= 0) fcntl(from_, F_SETFL, flags | O_NONBLOCK);
}

OutputRelay::~OutputRelay() {
  close_from();
}

void OutputRelay::close_from() {
  if (from_ >= 0) close(from_);
  from_ = -1;
}

void OutputRelay::write_out(std::string_view bytes) {
  const char* p = bytes.data();
  size_t n = bytes.size();
  while (n > 0 && !to_broken_) {
    ssize_t w = write(to_, p, n);
    if (w > 0) {
      p += w;
      n -= static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) {  // an inherited non-blocking stdout: wait until it drains
      pollfd pfd{to_, POLLOUT, 0};
      poll(&pfd, 1, -1);
      continue;
    }
    to_broken_ = true;  // EPIPE, EBADF, EIO: nobody reads our stdout any more
  }
}

void OutputRelay::pump(const LineScanner::Callback& on_line) {
  char buf[kReadSize];
  const std::int64_t now = whole_lines_ ? steady_ms() : 0;
  auto sink = [this](std::string_view bytes) { write_out(bytes); };
  for (int i = 0; i < kMaxReadsPerPump && from_ >= 0; ++i) {
    ssize_t n = read(from_, buf, sizeof buf);
    if (n > 0) {
      std::string_view data(buf, static_cast<size_t>(n));
      if (whole_lines_) {
        holder_.feed(data, now, sink);
      } else {
        write_out(data);
      }
      scanner_.feed(data, on_line);
      // A short read emptied the pipe: poll() says when there is more, which saves the read
      // that would only answer EAGAIN (a job that flushes every line wakes us once a line).
      if (static_cast<size_t>(n) < sizeof buf) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    close_from();  // end of file (every writer is gone) or an error
  }
}

void OutputRelay::on_tick(std::int64_t now_ms) {
  if (whole_lines_) holder_.on_tick(now_ms, [this](std::string_view b) { write_out(b); });
}

std::int64_t OutputRelay::next_due_in(std::int64_t now_ms) const {
  return whole_lines_ ? holder_.next_due_in(now_ms) : -1;
}

void OutputRelay::finish(const LineScanner::Callback& on_line) {
  // Every writer is gone, so the reads end with end-of-file; the bound only guards against a
  // writer that escaped (a descriptor passed to a process outside the job).
  for (int i = 0; i < 1024 && from_ >= 0; ++i) pump(on_line);
  close_from();
  holder_.finish([this](std::string_view b) { write_out(b); });
  scanner_.finish(on_line);
}

}  // namespace orch::agent
