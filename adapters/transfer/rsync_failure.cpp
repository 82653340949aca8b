#include "adapters/transfer/rsync_failure.h"

#include <csignal>
#include <cstring>
#include <vector>

#include "adapters/transfer/rsync_command.h"

namespace orch::transfer {

std::string last_lines(std::string_view text, std::size_t n) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find_first_of("\r\n", start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    if (!line.empty()) lines.push_back(line);
    start = end + 1;
  }
  std::string joined;
  const std::size_t from = lines.size() > n ? lines.size() - n : 0;
  for (std::size_t i = from; i < lines.size(); ++i) {
    joined += (joined.empty() ? "" : " | ") + std::string(lines[i]);
  }
  return joined;
}

bool says_unreachable(std::string_view err) {
  static constexpr std::string_view kWords[] = {"Connection refused",
                                                "Connection timed out",
                                                "Operation timed out",
                                                "No route to host",
                                                "Network is unreachable",
                                                "Could not resolve hostname",
                                                "Host key verification failed",
                                                "REMOTE HOST IDENTIFICATION HAS CHANGED",
                                                "Permission denied (publickey",
                                                "Connection closed by",
                                                "Connection reset by",
                                                "kex_exchange_identification",
                                                "Broken pipe",
                                                "connection unexpectedly closed"};
  for (auto w : kWords) {
    if (err.find(w) != std::string_view::npos) return true;
  }
  return false;
}

Error rsync_failure(const std::string& context, const process::ChildExit& exit,
                    std::string_view err) {
  std::string how;
  if (exit.exit_code >= 0) {
    how = "exited " + std::to_string(exit.exit_code) + " (" + rsync_exit_meaning(exit.exit_code) +
          ")";
  } else {
    how = "was killed by signal " + std::to_string(exit.signal) + " (" +
          std::string(strsignal(exit.signal)) + ")";
  }
  std::string tail = last_lines(err, 6);
  const std::string message = context + ": rsync " + how + (tail.empty() ? "" : ": " + tail);
  // ssh's own failure is 255 (rsync passes it on); rsync's 12 with a closed connection is a
  // login node or link gone mid-copy.
  const bool unreachable = exit.exit_code == 255 ||
                           (exit.exit_code == 12 && says_unreachable(err)) ||
                           (exit.exit_code == 5 && says_unreachable(err));
  return make_error(unreachable ? ErrorKind::unreachable : ErrorKind::io, message);
}

}  // namespace orch::transfer
