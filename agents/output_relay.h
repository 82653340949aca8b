#pragma once
// Copies the job's stdout (a pipe) to the agent's own stdout and hands the protocol lines it sees
// to a callback. By default the copy is byte for byte and written straight through (no buffering
// in the agent), so the output keeps its order and gains no latency beyond one read. With
// whole_lines (a task of a gang whose tasks share one output), only complete lines go out, each
// within one write (see line_holder.h), each with the task's tag at its start when one is given
// (a gang's "[<node>/<rank>] "); the protocol scanner still sees the job's own bytes, untagged. If
// the agent's stdout goes away, the job's output is still drained and discarded, so the job never
// blocks on a full pipe.

#include <cstdint>
#include <string>
#include <string_view>

#include "agents/line_holder.h"
#include "agents/protocol_scan.h"

namespace orch::agent {

class OutputRelay {
 public:
  // from: the read end (made non-blocking here); to: where the bytes go (the agent's stdout).
  // tag: with whole_lines, put before every line (log_tag_text); ignored without.
  OutputRelay(int from, int to, bool whole_lines = false, std::string tag = {});
  ~OutputRelay();
  OutputRelay(const OutputRelay&) = delete;
  OutputRelay& operator=(const OutputRelay&) = delete;

  // The descriptor to poll, or -1 once the job's end of the pipe is closed and all is read.
  int fd() const { return from_; }
  // Reads what is there now (up to a few MiB, to stay responsive), copies it, scans it.
  void pump(const LineScanner::Callback& on_line);
  // Whole lines: writes a partial line that has been held long enough. Milliseconds until that
  // is due are next_due_in (-1: nothing held, or not whole_lines).
  void on_tick(std::int64_t now_ms);
  std::int64_t next_due_in(std::int64_t now_ms) const;
  // The job is gone: reads what is left, writes what is held and scans a last line without a
  // newline.
  void finish(const LineScanner::Callback& on_line);

 private:
  void write_out(std::string_view bytes);
  void close_from();

  int from_;
  int to_;
  bool whole_lines_;
  bool to_broken_ = false;
  LineScanner scanner_;
  LineHolder holder_;
};

}  // namespace orch::agent
