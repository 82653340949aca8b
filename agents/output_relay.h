#pragma once
// Copies the job's stdout (a pipe) to the agent's own stdout byte for byte, as soon as it
// arrives, and hands the protocol lines it sees to a callback. The copy is written straight
// through (no buffering in the agent), so the output keeps its order and gains no latency beyond
// one read. If the agent's stdout goes away, the job's output is still drained and discarded,
// so the job never blocks on a full pipe.

#include <string_view>

#include "agents/protocol_scan.h"

namespace orch::agent {

class OutputRelay {
 public:
  // from: the read end (made non-blocking here); to: where the bytes go (the agent's stdout).
  OutputRelay(int from, int to);
  ~OutputRelay();
  OutputRelay(const OutputRelay&) = delete;
  OutputRelay& operator=(const OutputRelay&) = delete;

  // The descriptor to poll, or -1 once the job's end of the pipe is closed and all is read.
  int fd() const { return from_; }
  // Reads what is there now (up to a few MiB, to stay responsive), copies it, scans it.
  void pump(const LineScanner::Callback& on_line);
  // The job is gone: reads what is left and scans a last line without a newline.
  void finish(const LineScanner::Callback& on_line);

 private:
  void write_out(const char* p, size_t n);
  void close_from();

  int from_;
  int to_;
  bool to_broken_ = false;
  LineScanner scanner_;
};

}  // namespace orch::agent
