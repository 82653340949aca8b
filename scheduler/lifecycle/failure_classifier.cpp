// The failure classifier's matching: the precedence of failure_classifier.h over the rule table
// of failure_rules.cpp, the evidence line and the nodes it names.

#include "scheduler/lifecycle/failure_classifier.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <string>

#include "scheduler/model/log_tag.h"

namespace orch {
namespace {

constexpr std::size_t kMaxEvidence = 300;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Trimmed, and cut to kMaxEvidence bytes (on a UTF-8 character boundary) with "..." when longer.
std::string evidence_text(std::string_view line) {
  line = trim(line);
  if (line.size() <= kMaxEvidence) return std::string(line);
  std::size_t cut = kMaxEvidence - 3;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return std::string(line.substr(0, cut)) + "...";
}

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

// `node` appears in `text` as a whole name: "alpha-n1" in "alpha-n1:1234" or
// "alpha-n1.cluster.local", but "n1" not in "alpha-n1" nor in "n10".
bool names_node(std::string_view text, std::string_view node) {
  if (node.empty()) return false;
  for (std::size_t at = text.find(node); at != std::string_view::npos;
       at = text.find(node, at + 1)) {
    bool starts = at == 0 || !name_char(text[at - 1]);
    std::size_t end = at + node.size();
    bool ends = end == text.size() || !name_char(text[end]);
    if (starts && ends) return true;
  }
  return false;
}

// "[rank3]:   File ..." -> "  File ...": torchrun's per-rank prefix "[rankN]: ", after the task
// tag a gang's agent puts first ("[east-n0/3] ", scheduler/model/log_tag.h).
std::string_view strip_rank_prefix(std::string_view line) {
  line = strip_log_tag(line);
  if (line.starts_with("[rank")) {
    if (auto close = line.find("]:"); close != std::string_view::npos) {
      line.remove_prefix(close + 2);
      if (line.starts_with(' ')) line.remove_prefix(1);
    }
  }
  return line;
}

bool same_task(std::string_view a, std::string_view b) {
  const auto ta = split_log_tag(a, nullptr);
  const auto tb = split_log_tag(b, nullptr);
  if (!ta || !tb) return ta.has_value() == tb.has_value();
  return ta->node == tb->node && ta->rank == tb->rank;
}

// Whether a line reads as Python's exception line: a dotted name, then ": message" or nothing,
// where a bare name must end like an exception class ("KeyboardInterrupt", "StopIteration"
// without a message are rare, and a printed word like "loading" is not one).
bool looks_like_exception(std::string_view line) {
  line = trim(line);
  const std::size_t colon = line.find(": ");
  std::string_view name = line.substr(0, colon);
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name.front())) || name[0] == '_')) {
    return false;
  }
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  }
  if (colon != std::string_view::npos) return true;
  for (std::string_view end : {"Error", "Exception", "Interrupt", "Exit", "Warning", "Iteration"}) {
    if (name.ends_with(end)) return true;
  }
  return false;
}

// The exception a traceback that starts at lines[from] ends with ("ValueError: bad shape"):
// among the later lines of the same task (a gang's tasks interleave) that are neither indented
// (frames, source) nor a `File "..."` frame, the first that reads as an exception, else the
// first at all. stdout and stderr reach the log by different paths, so a line the task printed
// before it raised may land anywhere inside its traceback.
std::string_view exception_line(const std::vector<std::string>& lines, std::size_t from) {
  std::string_view first_plain;
  for (std::size_t i = from + 1; i < lines.size(); ++i) {
    if (!same_task(lines[from], lines[i])) continue;
    std::string_view body = strip_rank_prefix(lines[i]);
    if (trim(body).empty() || is_space(body.front())) continue;
    if (trim(body).starts_with("File \"")) continue;
    if (looks_like_exception(body)) return lines[i];
    if (first_plain.empty()) first_plain = lines[i];
  }
  return first_plain.empty() ? std::string_view(lines[from]) : first_plain;
}

// The job ended by itself with a non-zero code, as opposed to a signal (or a shell reporting
// its child killed by SIGKILL or SIGTERM as 128+N).
bool own_nonzero_exit(const ExitStatus& s) {
  if (s.signal || !s.exit_code || *s.exit_code == 0) return false;
  return *s.exit_code != 128 + SIGKILL && *s.exit_code != 128 + SIGTERM;
}

FailureVerdict verdict(ExitCause cause, std::string rule, std::string_view evidence) {
  FailureVerdict v;
  v.cause = cause;
  v.rule = std::move(rule);
  v.evidence = evidence_text(evidence);
  return v;
}

// Step 5: what the exit code and the signal alone say.
FailureVerdict by_exit_status(const ExitStatus& s) {
  std::string detail = s.detail;
  if (s.signal) {
    return verdict(ExitCause::killed_by_signal, "signal",
                   detail.empty() ? "killed by signal " + std::to_string(*s.signal) : detail);
  }
  if (!s.exit_code) {
    return verdict(ExitCause::lost, "no-exit-status",
                   detail.empty() ? "the site reported no exit code or signal" : detail);
  }
  const int code = *s.exit_code;
  const std::string words = "exit code " + std::to_string(code);
  if (code == 0) return verdict(ExitCause::succeeded, "exit-code", words);
  // A shell that does not exec its last command reports a child killed by SIGKILL or SIGTERM
  // as 128+N. Nobody in orchestrate sent it (no cancel was requested), so it is the machine's
  // doing: the OOM killer, a reboot, a preemption.
  if (code == 128 + SIGKILL || code == 128 + SIGTERM) {
    return verdict(
        ExitCause::killed_by_signal, "exit-code",
        words + " (a shell's child killed by signal " + std::to_string(code - 128) + ")");
  }
  return verdict(ExitCause::user_error, "exit-code", words);
}

}  // namespace

bool rule_matches(const FailureRule& rule, std::string_view line) {
  if (rule.all_of.empty() && rule.any_of.empty()) return false;
  for (std::string_view s : rule.all_of) {
    if (line.find(s) == std::string_view::npos) return false;
  }
  if (rule.any_of.empty()) return true;
  for (std::string_view s : rule.any_of) {
    if (line.find(s) != std::string_view::npos) return true;
  }
  return false;
}

FailureVerdict classify_failure(const FailureEvidence& e, const std::vector<std::string>& nodes) {
  const ExitStatus& s = e.status;
  // 1. Orchestrate asked it to stop: whatever it died of is "cancelled".
  if (e.cancel_requested) return verdict(ExitCause::cancelled, "cancelled", "cancel requested");
  // 2. It finished. Scary lines in the log of a job that exited 0 are not a failure.
  const bool provider_says = s.cause.has_value() || s.node_lost;
  if (!provider_says && !s.signal && s.exit_code == 0) return by_exit_status(s);
  // 3. The provider states the cause.
  // A failed `setup:` (issue 40) is the provider's word too: the user's cause, its last lines.
  if (s.cause) {
    return verdict(*s.cause, *s.cause == ExitCause::setup_failed ? "setup" : "provider",
                   s.detail.empty() ? to_string(*s.cause) : s.detail);
  }
  if (s.node_lost) {
    return verdict(ExitCause::node_lost, "provider-node-lost",
                   s.detail.empty() ? "the provider reports the node failed" : s.detail);
  }
  // 4. Log signatures, rule by rule in table order; the first line a rule matches is its
  // evidence (the earliest sign is nearest the root cause; later ones repeat it).
  for (const FailureRule& rule : failure_rules()) {
    if (rule.own_exit_only && !own_nonzero_exit(s)) continue;
    for (std::size_t i = 0; i < e.log_tail.size(); ++i) {
      if (!rule_matches(rule, e.log_tail[i])) continue;
      std::string_view line = e.log_tail[i];
      if (rule.python_exception) {
        // The last traceback in the tail is the one that ended the job.
        std::size_t last = i;
        for (std::size_t j = i + 1; j < e.log_tail.size(); ++j) {
          if (rule_matches(rule, e.log_tail[j])) last = j;
        }
        line = exception_line(e.log_tail, last);
      }
      // The evidence without the task tag; the nodes it names include the tag's.
      FailureVerdict v = verdict(rule.cause, std::string(rule.name), strip_log_tag(line));
      for (const std::string& n : nodes) {
        if (names_node(line, n) &&
            std::find(v.named_nodes.begin(), v.named_nodes.end(), n) == v.named_nodes.end()) {
          v.named_nodes.push_back(n);
        }
      }
      return v;
    }
  }
  // 5. The exit code and the signal alone.
  return by_exit_status(s);
}

}  // namespace orch
