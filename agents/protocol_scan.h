#pragma once
// What the agent needs from the job's stdout: the progress protocol's lines (see
// scheduler/model/progress_line.h and docs/progress-protocol.md), found cheaply. The agent links
// no JSON library, so it pulls out only the few values its event records carry; the scheduler
// reads the full lines from the job's output itself.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "scheduler/model/progress_prefix.h"

namespace orch::agent {

struct ProtocolLine {
  // checkpoint_start: a save begins (issue 43; agents/save_watch.h times it).
  enum class Kind { progress, checkpoint, checkpoint_start };
  Kind kind = Kind::progress;
  std::int64_t step = 0;
  std::string path;  // checkpoint and checkpoint_start only, unescaped
};

// A protocol line's event, step and (for checkpoints) path, or nullopt when the line does not
// start with the prefix, is not a progress, checkpoint or checkpoint_start event, or lacks a
// step >= 0 (or a non-empty path). Whitespace around ':' is allowed, as json.dumps in Python
// writes it.
std::optional<ProtocolLine> scan_protocol_line(std::string_view line);

// Cuts a byte stream into lines and hands over those that start with the prefix. Other lines
// are never copied: once a line's first bytes differ from the prefix, the rest of it is skipped
// with memchr. A protocol line longer than max_line is dropped.
class LineScanner {
 public:
  using Callback = std::function<void(std::string_view line)>;
  explicit LineScanner(size_t max_line = 64 * 1024) : max_line_(max_line) {}
  void feed(std::string_view bytes, const Callback& on_line);
  // The stream ended: a last protocol line without its newline still counts.
  void finish(const Callback& on_line);

 private:
  size_t max_line_;
  std::string line_;       // the current line so far, while it can still be a protocol line
  bool skipping_ = false;  // the current line is not one; wait for its newline
};

}  // namespace orch::agent
