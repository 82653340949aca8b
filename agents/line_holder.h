#pragma once
// Whole lines for an output that several agents share. When the tasks of a gang append to one
// file (the local site's output.log) or one srun stream, a line that one agent writes in pieces
// can be cut by another agent's line. The holder passes on only complete lines, each within a
// single write: a partial line is held until its newline comes, until kMaxHeld bytes of it have
// accumulated, or until kMaxHoldMs have passed since its first byte (then it goes as it is, so a
// progress bar or a prompt without a newline still shows), and at the end. Pure: the caller
// gives the times and does the writing, so it is tested without processes or sleeps.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace orch::agent {

class LineHolder {
 public:
  static constexpr size_t kMaxHeld = size_t{64} * 1024;
  static constexpr std::int64_t kMaxHoldMs = 1'000;

  // Receives bytes ready to go out; the caller writes them with one write().
  using Sink = std::function<void(std::string_view bytes)>;

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

  std::string held_;             // a line's start, without its newline
  std::int64_t held_since_ = 0;  // steady ms of held_'s first byte
};

}  // namespace orch::agent
