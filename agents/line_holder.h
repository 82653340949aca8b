#pragma once
// Whole lines for an output that several agents share. When the tasks of a gang append to one
// file (the local site's output.log) or one srun stream, a line that one agent writes in pieces
// can be cut by another agent's line. The holder passes on only complete lines, each within a
// single write: a partial line is held until its newline comes, until kMaxHeld bytes of it have
// accumulated, or until kMaxHoldMs have passed since its first byte (then it goes as it is, so a
// progress bar or a prompt without a newline still shows), and at the end. Pure: the caller
// gives the times and does the writing, so it is tested without processes or sleeps.
//
// With a tag (a gang's task: "[<node>/<rank>] ", scheduler/model/log_tag.h), every line goes out
// with the tag at its start, once: a partial line that was let go before its newline (after a
// second, at 64 KiB) carries the tag, and its continuation does not (it is the rest of the same
// line; where no other task wrote in between, the file shows one tagged line). At the end, a
// tagged last line without a newline gets one, so the next task's tag still starts a line.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace orch::agent {

class LineHolder {
 public:
  static constexpr size_t kMaxHeld = size_t{64} * 1024;
  static constexpr std::int64_t kMaxHoldMs = 1'000;

  // Receives bytes ready to go out; the caller writes them with one write().
  using Sink = std::function<void(std::string_view bytes)>;

  LineHolder() = default;
  // tag: put before every line (empty: the bytes go out as they came).
  explicit LineHolder(std::string tag) : tag_(std::move(tag)) {}

  // Bytes read at now_ms (steady). Calls sink once with every complete line there is (the held
  // part first), and with a partial line once it reaches kMaxHeld; holds the rest.
  void feed(std::string_view bytes, std::int64_t now_ms, const Sink& sink);
  // Writes the held partial line when it has waited kMaxHoldMs.
  void on_tick(std::int64_t now_ms, const Sink& sink);
  // The stream ended: writes whatever is held.
  void finish(const Sink& sink);
  // Milliseconds from now_ms until on_tick has something to do; -1 when nothing is held.
  std::int64_t next_due_in(std::int64_t now_ms) const;

  size_t held() const { return held_.size(); }

 private:
  void release(const Sink& sink);
  // Passes bytes on, with the tag before each line that starts in them.
  void emit(std::string_view bytes, const Sink& sink);

  std::string tag_;
  std::string tagged_;           // emit's buffer (kept to reuse its memory)
  bool line_open_ = false;       // the last bytes that went out ended mid-line
  std::string held_;             // a line's start, without its newline
  std::int64_t held_since_ = 0;  // steady ms of held_'s first byte
};

}  // namespace orch::agent
