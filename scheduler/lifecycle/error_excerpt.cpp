// What failed, in the job's own words: the excerpt an attempt keeps when it fails
// (error_excerpt.h).

#include "scheduler/lifecycle/error_excerpt.h"

#include "scheduler/common/utf8.h"
#include "scheduler/model/log_tag.h"

namespace orch {
namespace {

constexpr std::string_view kProtocolPrefix = "@orchestrate";

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

bool is_protocol(std::string_view line) {
  return trim(strip_log_tag(line)).starts_with(kProtocolPrefix);
}

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// "bash: line 1: x: command not found" -> "x: command not found"; "sh: 1: x: not found" ->
// "x: not found": the shell's name and line number say nothing the hint does not.
std::string_view without_shell_prefix(std::string_view line) {
  for (std::string_view shell : {"bash: ", "sh: ", "/bin/sh: ", "/bin/bash: ", "orch-shell: "}) {
    if (!line.starts_with(shell)) continue;
    line.remove_prefix(shell.size());
    std::string_view rest = line;
    if (rest.starts_with("line ")) rest.remove_prefix(5);
    const std::size_t colon = rest.find(": ");
    if (colon != std::string_view::npos && is_digits(rest.substr(0, colon))) {
      line = rest.substr(colon + 2);
    }
    return line;
  }
  return line;
}

// The lines of the first failing task: in a gang's tagged output, those of its node (and rank,
// when known); the tail as it is when the lines carry no tag or the site named no node.
std::vector<std::string_view> failing_task_lines(const ExcerptInput& in) {
  std::vector<std::string_view> all, mine;
  const std::string& node = in.status.failed_node;
  for (const std::string& line : in.log_tail) {
    if (trim(line).empty() || is_protocol(line)) continue;
    all.push_back(line);
    if (node.empty()) continue;
    if (auto tag = split_log_tag(line, nullptr);
        tag && tag->node == node &&
        (!in.status.failed_rank || tag->rank == *in.status.failed_rank)) {
      mine.push_back(line);
    }
  }
  return mine.empty() ? all : mine;
}

// For 126 and 127 decided by the exit code: the shell's complaint, when the task printed one.
std::string shell_complaint(const std::vector<std::string_view>& lines) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const std::string_view text = trim(strip_log_tag(*it));
    for (std::string_view sign :
         {"not found", "Permission denied", "No such file or directory", "cannot execute"}) {
      if (text.find(sign) != std::string_view::npos) {
        return excerpt_line(without_shell_prefix(text));
      }
    }
  }
  return "";
}

}  // namespace

bool is_failure_cause(ExitCause cause) {
  switch (cause) {
    case ExitCause::none:
    case ExitCause::succeeded:
    case ExitCause::cancelled:
    case ExitCause::priority_preempted:
    case ExitCause::quota_reclaimed:
    case ExitCause::queue_timeout:
    case ExitCause::site_misconfigured:
      return false;
    default:
      return true;
  }
}

std::string excerpt_line(std::string_view line, std::size_t max_bytes) {
  std::string clean;
  for (char c : to_valid_utf8(trim(line))) {
    const auto u = static_cast<unsigned char>(c);
    clean += (u < 0x20 || u == 0x7f) ? (c == '\t' ? ' ' : '?') : c;
  }
  if (clean.size() <= max_bytes) return clean;
  return std::string(utf8_prefix(clean, max_bytes > 3 ? max_bytes - 3 : 0)) + "...";
}

std::string command_hint(int exit_code, std::string_view node, const CommandPlace& place) {
  if (exit_code != 126 && exit_code != 127) return "";
  std::string out = exit_code == 127 ? "command not found" : "command found but not executable";
  if (!node.empty()) out += " on " + excerpt_line(node, 253);
  out += " (exit " + std::to_string(exit_code) + "): it runs under ";
  if (place.shell == "sh") {
    out += "/bin/sh -c";
  } else if (place.shell == "bash") {
    out += "bash -c";
  } else if (place.shell == "bash-login") {
    out += "bash -l -c (a login shell)";
  } else {
    out += "bash -c (/bin/sh -c where there is no bash)";
  }
  const bool in_image = !place.image.empty();
  if (in_image) out += " in image " + excerpt_line(place.image, 200);
  if (!place.image_workdir.empty()) {
    out += " in " + excerpt_line(place.image_workdir, 200);
  } else if (place.has_workdir) {
    out += " in $ORCH_WORKDIR (the job's workdir)";
  } else if (place.provider == "kubernetes") {
    out += in_image ? "" : " in the image's working directory";
  } else {
    out += " in the attempt's own work directory";
  }
  const std::string path =
      in_image || place.provider == "kubernetes" ? "the image's" : "the node's";
  out += exit_code == 127
             ? ", with " + path +
                   " PATH: install it there or give its full path (shell: bash-login reads the "
                   "login profile, for module and conda set-ups)"
             : ": check that the file is executable by the job's user and starts with a valid "
               "#! line";
  return out;
}

std::string build_error_excerpt(const ExcerptInput& in) {
  const std::vector<std::string_view> lines = failing_task_lines(in);
  const std::optional<int> code = in.status.signal ? std::nullopt : in.status.exit_code;
  const bool by_code = in.verdict.rule == "exit-code" && code && (*code == 126 || *code == 127);
  std::vector<std::string> out;
  std::string headline = by_code ? shell_complaint(lines) : "";
  if (headline.empty()) headline = excerpt_line(strip_log_tag(in.verdict.evidence));
  if (!headline.empty()) out.push_back(headline);
  if (by_code) out.push_back(command_hint(*code, in.status.failed_node, in.place));
  const std::size_t from = lines.size() > kExcerptTailLines ? lines.size() - kExcerptTailLines : 0;
  for (std::size_t i = from; i < lines.size(); ++i) out.push_back(excerpt_line(lines[i]));
  // Bounded: whole lines while they fit, the first always (cut to fit).
  std::string text;
  for (const std::string& line : out) {
    const std::size_t need = line.size() + (text.empty() ? 0 : 1);
    if (text.size() + need > kMaxExcerptBytes) {
      if (text.empty()) text = excerpt_line(line, kMaxExcerptBytes);
      break;
    }
    text += (text.empty() ? "" : "\n") + line;
  }
  return text;
}

std::string reason_with_excerpt(std::string_view reason, std::string_view excerpt,
                                std::size_t max_headline) {
  const std::string_view headline = excerpt.substr(0, excerpt.find('\n'));
  const std::size_t colon = reason.find(": ");
  if (trim(headline).empty() || colon == std::string_view::npos) return std::string(reason);
  const std::string_view cause = reason.substr(0, colon);
  if (cause.empty() || cause.find(' ') != std::string_view::npos) return std::string(reason);
  return std::string(cause) + ": " + excerpt_line(headline, max_headline) + "; " +
         std::string(reason.substr(colon + 2));
}

}  // namespace orch
