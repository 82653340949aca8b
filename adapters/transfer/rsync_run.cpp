#include "adapters/transfer/rsync_run.h"

namespace orch::transfer {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// stderr past this is cut to its tail: the last lines say why rsync failed.
constexpr std::size_t kErrKeep = std::size_t{64} * 1024;

void keep_tail(std::string& s) {
  if (s.size() > 2 * kErrKeep) s.erase(0, s.size() - kErrKeep);
}

}  // namespace

Result<RunResult> run_rsync(const RunCommand& command, const RunWatch& watch) {
  const auto started = Clock::now();
  auto child = process::ChildProcess::spawn(command.argv, command.env);
  if (!child) return child.error();

  RunResult result;
  RsyncProgressParser parser;
  std::string out;
  auto last_output = Clock::now();
  Clock::time_point own_last_progress = Clock::now() - watch.progress_every;
  Clock::time_point& last_progress =
      watch.last_progress != nullptr ? *watch.last_progress : own_last_progress;
  auto last_restart_check = Clock::now();
  bool unreported = false;

  auto report = [&] {
    const auto now = Clock::now();
    if (!unreported || !parser.latest()) return;
    if (now - last_progress < watch.progress_every) return;
    last_progress = now;
    unreported = false;
    if (watch.progress) watch.progress(*parser.latest());
  };
  auto stop_early = [&](RunEnd why) {
    result.end = why;
    if (command.stop_remote) command.stop_remote();
    process::terminate_child(*child, watch.stop_grace, out, result.err);
    if (parser.feed(out)) unreported = true;
    out.clear();
  };

  for (;;) {
    if (child->output_closed() && child->try_wait()) break;
    const std::size_t n = child->read_some(watch.poll_every, out, result.err);
    const auto now = Clock::now();
    if (n > 0) last_output = now;
    if (!out.empty()) {
      if (parser.feed(out)) unreported = true;
      out.clear();
    }
    keep_tail(result.err);
    report();
    if (watch.stop && watch.stop()) {
      stop_early(RunEnd::stopped);
      break;
    }
    if (now - last_restart_check >= watch.restart_check_every) {
      last_restart_check = now;
      if (watch.restart && watch.restart()) {
        stop_early(RunEnd::restart);
        break;
      }
    }
    if (now - last_output >= watch.stall_timeout) {
      stop_early(RunEnd::stalled);
      break;
    }
  }
  report();
  keep_tail(result.err);
  result.exit = child->exit();
  if (parser.latest()) {
    result.bytes = parser.latest()->bytes;
    result.had_progress = true;
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return result;
}

}  // namespace orch::transfer
