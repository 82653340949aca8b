#pragma once
// What failed, in the job's own words (issue 41, item 6): an attempt that ends with a failure
// keeps an excerpt, shown in `job list`'s REASON (its first line), `job show`, the job's JSON,
// the page and webhook bodies. Pure: the brain builds it from the classifier's verdict, the
// site's exit status and the attempt's log tail when the attempt ends (docs/failure-classes.md,
// "What failed").
//
// The excerpt is lines joined with "\n", at most kMaxExcerptBytes of valid UTF-8 without
// control bytes, never a protocol line:
//   1. the headline: the classifier's evidence (the log line a rule matched, the exception a
//      traceback ended with, the provider's words, "exit code 3"); for exit codes 126 and 127
//      decided by the code alone, the shell's own complaint ("bash: line 1: torchrun: command
//      not found") when the failing task printed one;
//   2. for 126 and 127, a hint: what the command runs under and where (command_hint);
//   3. the last kExcerptTailLines ordinary lines of the first failing task's output: in a gang,
//      the lines tagged with its node (and rank, when the site knows it; scheduler/model/
//      log_tag.h), else the tail as it is.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/lifecycle/failure_classifier.h"
#include "scheduler/model/job_state.h"
#include "scheduler/model/site_types.h"

namespace orch {

inline constexpr std::size_t kMaxExcerptBytes = 2048;
inline constexpr std::size_t kExcerptTailLines = 5;
inline constexpr std::size_t kMaxExcerptLineBytes = 400;

// Where and how the job's command runs (the launch contract): what the hint for 126/127 says.
struct CommandPlace {
  std::string shell;          // the job's `shell:` ("" the default)
  bool has_workdir = false;   // the job has a `workdir:` (ORCH_WORKDIR)
  std::string image;          // the job's `container.image` ("" none)
  std::string image_workdir;  // its `container.workdir` ("" none)
  std::string provider;       // the cluster's provider (local, slurm, kubernetes)
};

struct ExcerptInput {
  FailureVerdict verdict;
  ExitStatus status;                  // failed_node and failed_rank pick the failing task
  std::vector<std::string> log_tail;  // the attempt's last ordinary lines, oldest first
  CommandPlace place;
};

// Whether an attempt that ended with `cause` failed, and so keeps an excerpt: not a success,
// nor a stop orchestrate asked for (a cancel, a preemption or quota reclaim for another job, a
// move off a long queue), nor the server's own misconfiguration.
bool is_failure_cause(ExitCause cause);

// The excerpt (above); "" when there is nothing to say.
std::string build_error_excerpt(const ExcerptInput& in);

// For exit codes 126 and 127: "command not found on east-n0 (exit 127): it runs under bash -c
// (/bin/sh -c where the node has no bash) in $ORCH_WORKDIR (the job's workdir), with the node's
// PATH: ..."; in a container image, its working directory and PATH; "" for other codes. `node`
// may be empty (the site did not name it).
std::string command_hint(int exit_code, std::string_view node, const CommandPlace& place);

// One line of text as the excerpt keeps it: valid UTF-8, control bytes as '?', blanks at the
// ends trimmed, cut to `max_bytes` on a character boundary with "..." when longer.
std::string excerpt_line(std::string_view line, std::size_t max_bytes = kMaxExcerptLineBytes);

// A job's reason with what failed: "user_error: user restart budget spent (1 of 1)" and an
// excerpt headed "torchrun: command not found" give "user_error: torchrun: command not found;
// user restart budget spent (1 of 1)" (the headline cut to `max_headline` bytes). The reason as
// it is when the excerpt is empty or the reason has no "<cause>: " head.
std::string reason_with_excerpt(std::string_view reason, std::string_view excerpt,
                                std::size_t max_headline = 120);

}  // namespace orch
