#include "adapters/process/run_captured.h"

#include <signal.h>

namespace orch::process {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Applies the limits to what the last read appended.
void bound(std::string& out, std::string& err, const RunOptions& o, bool& overflow) {
  if (out.size() > o.max_out) {
    overflow = true;
    out.resize(o.max_out);
  }
  if (err.size() > 2 * o.max_err) err.erase(0, err.size() - o.max_err);
}

}  // namespace

Result<CapturedRun> run_captured(const std::vector<std::string>& argv, const RunOptions& o) {
  auto child = ChildProcess::spawn(argv, o.env);
  if (!child) return child.error();
  CapturedRun c;
  const auto deadline = Clock::now() + o.timeout;
  bool overflow = false;
  while (!(child->output_closed() && child->try_wait())) {
    if (Clock::now() >= deadline) {
      c.timed_out = true;
      break;
    }
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    child->read_some(std::min(left, milliseconds(50)), c.out, c.err);
    bound(c.out, c.err, o, overflow);
    if (overflow && o.kill_on_overflow) {
      c.overflowed = true;
      break;
    }
  }
  if (c.timed_out || c.overflowed) {
    std::string late_out;
    if (c.timed_out && o.grace.count() > 0) {
      terminate_child(*child, o.grace, late_out, c.err);
    } else {
      child->signal_group(SIGKILL);
      child->wait_for(milliseconds(5000));
    }
    if (!c.overflowed) c.out += late_out;
    bound(c.out, c.err, o, overflow);
  }
  if (c.err.size() > o.max_err) c.err.erase(0, c.err.size() - o.max_err);
  c.exit = child->exit();
  return c;
}

}  // namespace orch::process
