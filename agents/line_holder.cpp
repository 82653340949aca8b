// See line_holder.h.
#include "agents/line_holder.h"

#include <algorithm>

namespace orch::agent {

void LineHolder::emit(std::string_view bytes, const Sink& sink) {
  if (bytes.empty()) return;
  if (tag_.empty()) {
    sink(bytes);
    return;
  }
  tagged_.clear();
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    const size_t n = nl == std::string_view::npos ? bytes.size() : nl + 1;
    if (!line_open_) tagged_ += tag_;
    tagged_.append(bytes.substr(0, n));
    line_open_ = nl == std::string_view::npos;
    bytes.remove_prefix(n);
  }
  sink(tagged_);
}

void LineHolder::release(const Sink& sink) {
  if (held_.empty()) return;
  emit(held_, sink);
  held_.clear();
}

void LineHolder::feed(std::string_view bytes, std::int64_t now_ms, const Sink& sink) {
  if (bytes.empty()) return;
  const size_t last_newline = bytes.rfind('\n');
  if (last_newline == std::string_view::npos) {
    if (held_.empty()) held_since_ = now_ms;
    held_.append(bytes);
    if (held_.size() >= kMaxHeld) release(sink);
    return;
  }
  std::string_view lines = bytes.substr(0, last_newline + 1);
  std::string_view rest = bytes.substr(last_newline + 1);
  if (held_.empty()) {
    emit(lines, sink);  // the common case: no copy (untagged)
  } else {
    held_.append(lines);
    release(sink);
  }
  if (!rest.empty()) {
    held_.assign(rest);
    held_since_ = now_ms;
    if (held_.size() >= kMaxHeld) release(sink);
  }
}

void LineHolder::on_tick(std::int64_t now_ms, const Sink& sink) {
  if (!held_.empty() && now_ms - held_since_ >= kMaxHoldMs) release(sink);
}

void LineHolder::finish(const Sink& sink) {
  if (tag_.empty()) {
    release(sink);
    return;
  }
  // Tagged: the last line is ended (in the same write as its held part, when there is one).
  if (!held_.empty()) {
    held_ += '\n';
    release(sink);
  } else if (line_open_) {
    sink("\n");
  }
  line_open_ = false;
}

std::int64_t LineHolder::next_due_in(std::int64_t now_ms) const {
  if (held_.empty()) return -1;
  return std::max<std::int64_t>(0, held_since_ + kMaxHoldMs - now_ms);
}

}  // namespace orch::agent
