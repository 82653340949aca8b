#pragma once
// The failure classifier: why an attempt ended, from everything we know about it. One table of
// rules (failure_rules.cpp) over the provider's state, the exit code, the signal and signatures
// in the job's last log lines, each rule with a name and the real log excerpt it was written
// from (tests/unit/lifecycle). First match wins, in this order:
//   1. orchestrate cancelled it              -> cancelled
//   2. exit code 0 and no provider cause     -> succeeded
//   3. the provider states a cause (Slurm PREEMPTED/TIMEOUT/OUT_OF_MEMORY/NODE_FAIL, pod
//      OOMKilled/evicted; a failed setup:)   -> that cause
//   4. log signatures, in table order        -> gpu_error | io_error | out_of_memory |
//                                               user_error | network_error | user_error
//   5. the exit code and signal alone        -> user_error | killed_by_signal | lost
//                                               (classify_exit is this without a log)
// Infra causes (is_infra_cause) never spend the user's retry budget.
// The table puts root causes before their echoes: one rank's GPU fault, full disk, CUDA OOM or
// illegal memory access makes the other ranks' collectives time out, so those rules come
// before the network ones; a bare Python traceback comes last. docs/failure-classes.md lists
// the rules and says how to add one.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/model/job_state.h"
#include "scheduler/model/site_types.h"

namespace orch {

struct FailureEvidence {
  ExitStatus status;
  bool cancel_requested = false;
  std::vector<std::string> log_tail;  // the attempt's last output lines, oldest first
};

struct FailureVerdict {
  ExitCause cause = ExitCause::lost;
  std::string rule;      // the rule that decided, e.g. "xid-fatal", "nccl-watchdog", "exit-code"
  std::string evidence;  // the log line or provider words that matched (trimmed, <= 300 chars)
  // Node names that appear in the evidence line (e.g. "NCCL ... host alpha-n3"); empty when the
  // line names none. The brain implicates these nodes, else all of a one-node attempt's nodes.
  std::vector<std::string> named_nodes;
};

// One rule of the table: a cause and the substrings (case-sensitive, all must appear in one
// line) that identify it. `example` is a real log excerpt the rule must match.
struct FailureRule {
  std::string_view name;
  ExitCause cause;
  std::vector<std::string_view> all_of;
  std::string_view example;
  // And at least one of these in the same line (empty: no such condition). A rule has at
  // least one substring in all_of or any_of.
  std::vector<std::string_view> any_of = {};
  // Only when the job exited by itself with a non-zero code (not a signal, not 128+SIGKILL or
  // 128+SIGTERM from a shell): a traceback printed before a kill is not what ended it.
  bool own_exit_only = false;
  // The evidence is the exception line the traceback ends with, not the "Traceback" line.
  bool python_exception = false;
};

// Whether one log line carries the rule's signature.
bool rule_matches(const FailureRule& rule, std::string_view line);

std::span<const FailureRule> failure_rules();

// `known_nodes`: the attempt's nodes, used to fill named_nodes.
FailureVerdict classify_failure(const FailureEvidence& evidence,
                                const std::vector<std::string>& known_nodes = {});

}  // namespace orch
