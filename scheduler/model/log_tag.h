#pragma once
// The task tag a gang's agent puts before each line of its task's output (issue 41, item 5):
// "[<node>/<rank>] <the line>", node as the site names it, rank the task's global rank. Shared by
// the agent that writes it (agents/), the scheduler that strips it before parsing protocol lines
// and output tails, and the CLI and page that filter a job's log by rank or node. Header-only and
// free of libraries: the agent is built apart from the scheduler.
//
// Only the first tag of a line is the agent's: a job that prints "[x/3] ..." itself shows as
// "[n0/0] [x/3] ...", and stripping one tag leaves its own text as it printed it.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace orch {

struct LogTag {
  std::string_view node;
  int rank = 0;
};

// A node name the tag can carry: 1..253 bytes of [A-Za-z0-9._-] (what Slurm, Kubernetes and the
// local provider name nodes with). The agent writes "?" for a node it cannot name.
inline bool log_tag_node_ok(std::string_view node) {
  if (node == "?") return true;
  if (node.empty() || node.size() > 253) return false;
  for (char c : node) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// "[node/rank] " for a task; an unusable node name is written as "?".
inline std::string log_tag_text(std::string_view node, int rank) {
  std::string out = "[";
  out += log_tag_node_ok(node) ? node : std::string_view("?");
  out += '/';
  out += std::to_string(rank < 0 ? 0 : rank);
  out += "] ";
  return out;
}

// Splits a tagged line: the tag, and in *rest the line after "] ". nullopt (and *rest = line)
// when the line does not start with a well-formed tag.
inline std::optional<LogTag> split_log_tag(std::string_view line, std::string_view* rest) {
  if (rest) *rest = line;
  if (line.size() < 5 || line[0] != '[') return std::nullopt;
  const std::size_t close = line.find("] ");
  if (close == std::string_view::npos || close > 270) return std::nullopt;
  const std::string_view inner = line.substr(1, close - 1);
  const std::size_t slash = inner.rfind('/');
  if (slash == std::string_view::npos || slash + 1 >= inner.size()) return std::nullopt;
  const std::string_view digits = inner.substr(slash + 1);
  if (digits.size() > 9) return std::nullopt;
  int rank = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    rank = rank * 10 + (c - '0');
  }
  LogTag tag{inner.substr(0, slash), rank};
  if (!log_tag_node_ok(tag.node)) return std::nullopt;
  if (rest) *rest = line.substr(close + 2);
  return tag;
}

// The line without its tag (the line itself when it has none).
inline std::string_view strip_log_tag(std::string_view line) {
  std::string_view rest;
  split_log_tag(line, &rest);
  return rest;
}

}  // namespace orch
