// The failure classifier's precedence (failure_classifier.h): cancel, success, the provider's
// cause, log signatures, then the exit code and signal alone; the evidence it keeps; and
// classify_exit, which is the classifier without a log.
#include <gmock/gmock.h>

#include <csignal>
#include <string>
#include <vector>

#include "scheduler/lifecycle/exit_classifier.h"
#include "scheduler/lifecycle/failure_classifier.h"

namespace orch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kWatchdog =
    "[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, "
    "NumelIn=544997376, NumelOut=68124672, Timeout(ms)=600000) ran for 600061 milliseconds "
    "before timing out.";
const std::string kXid = "NVRM: Xid (PCI:0000:3b:00): 79, pid=2213, GPU has fallen off the bus.";

ExitStatus code(int c) {
  ExitStatus s;
  s.exit_code = c;
  return s;
}
ExitStatus sig(int n) {
  ExitStatus s;
  s.signal = n;
  return s;
}

FailureVerdict classify(ExitStatus status, std::vector<std::string> log, bool cancel = false) {
  return classify_failure(FailureEvidence{std::move(status), cancel, std::move(log)});
}

TEST(FailureClassifier, ACancelWinsOverEverything) {
  ExitStatus preempted = code(1);
  preempted.cause = ExitCause::preempted;
  FailureVerdict v = classify(preempted, {kXid, kWatchdog}, /*cancel=*/true);
  EXPECT_EQ(v.cause, ExitCause::cancelled);
  EXPECT_EQ(v.rule, "cancelled");
  EXPECT_EQ(classify(code(0), {}, true).cause, ExitCause::cancelled);
}

TEST(FailureClassifier, ExitZeroIgnoresScaryLogLines) {
  FailureVerdict v = classify(code(0), {kXid, kWatchdog, "Traceback (most recent call last):"});
  EXPECT_EQ(v.cause, ExitCause::succeeded);
  EXPECT_EQ(v.rule, "exit-code");
}

TEST(FailureClassifier, TheProvidersCauseWinsOverTheLog) {
  ExitStatus timeout = sig(SIGTERM);
  timeout.cause = ExitCause::time_limit;
  timeout.detail = "TIMEOUT";
  FailureVerdict v = classify(timeout, {kWatchdog});
  EXPECT_EQ(v.cause, ExitCause::time_limit);
  EXPECT_EQ(v.rule, "provider");
  EXPECT_EQ(v.evidence, "TIMEOUT");

  ExitStatus node_fail = code(0);  // even an exit code 0 the provider says the node lost
  node_fail.node_lost = true;
  node_fail.detail = "NODE_FAIL";
  v = classify(node_fail, {"CUDA out of memory"});
  EXPECT_EQ(v.cause, ExitCause::node_lost);
  EXPECT_EQ(v.rule, "provider-node-lost");
  EXPECT_EQ(v.evidence, "NODE_FAIL");

  ExitStatus oom = sig(SIGKILL);
  oom.cause = ExitCause::out_of_memory;  // pod OOMKilled, no detail: the cause's own name
  v = classify(oom, {kWatchdog});
  EXPECT_EQ(v.cause, ExitCause::out_of_memory);
  EXPECT_EQ(v.evidence, "out_of_memory");

  ExitStatus hang = sig(SIGKILL);  // orchestrate stopped it for making no progress
  hang.cause = ExitCause::hang;
  EXPECT_EQ(classify(hang, {"Traceback (most recent call last):", "KeyError: 1"}).cause,
            ExitCause::hang);
}

TEST(FailureClassifier, ATracebackAfterAnNcclWatchdogLineIsANetworkError) {
  FailureVerdict v = classify(
      code(1), {"step 400 | loss 1.92", kWatchdog,
                "Traceback (most recent call last):", "  File \"train.py\", line 88, in <module>",
                "torch.distributed.DistBackendError: NCCL communicator "
                "was aborted on rank 0."});
  EXPECT_EQ(v.cause, ExitCause::network_error);
  EXPECT_EQ(v.rule, "nccl-watchdog-timeout");
}

TEST(FailureClassifier, RootCausesComeBeforeTheTimeoutsTheyCauseOnOtherRanks) {
  // One rank runs out of GPU memory; the others time out waiting for it.
  FailureVerdict v = classify(code(1), {kWatchdog,
                                        "torch.cuda.OutOfMemoryError: CUDA out of "
                                        "memory. Tried to allocate 2.00 GiB."});
  EXPECT_EQ(v.cause, ExitCause::out_of_memory);
  // A GPU falls off the bus; the collectives time out.
  v = classify(code(1), {kWatchdog, kXid});
  EXPECT_EQ(v.cause, ExitCause::gpu_error);
  // Rank 0's checkpoint write fails on a full disk; the others time out.
  v = classify(code(1), {kWatchdog, "OSError: [Errno 28] No space left on device"});
  EXPECT_EQ(v.cause, ExitCause::io_error);
}

TEST(FailureClassifier, NoSignatureAndANonZeroExitIsTheUsersError) {
  FailureVerdict v = classify(code(3), {"step 10 | loss 4.1", "config error: lr must be > 0"});
  EXPECT_EQ(v.cause, ExitCause::user_error);
  EXPECT_EQ(v.rule, "exit-code");
  EXPECT_EQ(v.evidence, "exit code 3");
}

TEST(FailureClassifier, ASignalIsKilledBySignal) {
  FailureVerdict v = classify(sig(SIGKILL), {"step 10 | loss 4.1"});
  EXPECT_EQ(v.cause, ExitCause::killed_by_signal);
  EXPECT_EQ(v.rule, "signal");
  EXPECT_EQ(v.evidence, "killed by signal 9");
}

TEST(FailureClassifier, ATracebackOnlyBlamesTheUserForTheirOwnExit) {
  std::vector<std::string> log = {"Traceback (most recent call last):", "KeyError: 'x'"};
  EXPECT_EQ(classify(code(1), log).rule, "python-traceback");
  // Killed afterwards (a signal, or a shell's 128+SIGKILL): the kill is what ended it.
  EXPECT_EQ(classify(sig(SIGKILL), log).cause, ExitCause::killed_by_signal);
  EXPECT_EQ(classify(code(128 + SIGKILL), log).cause, ExitCause::killed_by_signal);
}

// A gang's lines carry their task's tag ("[node/rank] ", scheduler/model/log_tag.h) and the
// tasks' lines interleave: the exception is the failing task's own, the evidence is untagged,
// and the tag's node is a node the line names.
TEST(FailureClassifier, AGangsTaggedTracebackIsReadFromItsOwnTask) {
  std::vector<std::string> log = {
      "[w-n1/3] Traceback (most recent call last):", "[w-n0/0] epoch 2 starts",
      "[w-n1/3]   File \"train.py\", line 9, in <module>", "[w-n1/3]     step()",
      "[w-n1/3] KeyError: 'lr'"};
  FailureEvidence e{code(1), false, log};
  FailureVerdict v = classify_failure(e, {"w-n0", "w-n1"});
  EXPECT_EQ(v.rule, "python-traceback");
  EXPECT_EQ(v.evidence, "KeyError: 'lr'");
  EXPECT_EQ(v.named_nodes, (std::vector<std::string>{"w-n1"}));
}

// stdout and stderr reach the log by different paths, so a line the task printed before it
// raised may land inside its traceback: the exception is the line after the frames.
TEST(FailureClassifier, ALinePrintedIntoATracebackIsNotItsException) {
  const std::string frame = "  File \"<string>\", line 1, in <module>";
  const std::string error = "ValueError: bad shape (3, 4)";
  for (const auto& log : std::vector<std::vector<std::string>>{
           {"Traceback (most recent call last):", "loading", frame, error},
           {"Traceback (most recent call last):", frame, "loading", error},
           {"Traceback (most recent call last):", frame, error, "loading"}}) {
    FailureVerdict v = classify(code(1), log);
    EXPECT_EQ(v.rule, "python-traceback");
    EXPECT_EQ(v.evidence, error) << log[1] << " / " << log[2];
  }
  // An exception without a message is still one; a printed word never is.
  EXPECT_EQ(classify(code(1), {"Traceback (most recent call last):", "loading", frame,
                               "KeyboardInterrupt"})
                .evidence,
            "KeyboardInterrupt");
  EXPECT_EQ(classify(code(1), {"Traceback (most recent call last):", frame, "loading"}).evidence,
            "loading");
}

TEST(FailureClassifier, LogSignaturesStillApplyWithoutAnExitRecord) {
  FailureVerdict v = classify(ExitStatus{}, {kXid});
  EXPECT_EQ(v.cause, ExitCause::gpu_error);
  EXPECT_EQ(classify(ExitStatus{}, {}).cause, ExitCause::lost);
}

TEST(FailureClassifier, EvidenceIsTrimmedTo300Characters) {
  std::string longline = "  " + kWatchdog + std::string(400, 'x') + "  ";
  FailureVerdict v = classify(code(1), {longline});
  EXPECT_EQ(v.rule, "nccl-watchdog-timeout");
  EXPECT_LE(v.evidence.size(), 300u);
  EXPECT_THAT(v.evidence, ::testing::StartsWith("[rank0]"));
  EXPECT_THAT(v.evidence, ::testing::EndsWith("..."));
  // A cut never splits a UTF-8 character: byte 297 is the second half of an "é".
  std::string head = "CUDA out of memory " + std::string(277, 'a');
  v = classify(code(1), {head + "\xc3\xa9\xc3\xa9\xc3\xa9"});
  EXPECT_EQ(v.evidence, head + "...");
}

TEST(FailureClassifier, NamedNodesAreTheKnownNodesInTheEvidenceLine) {
  std::string ib =
      "alpha-n3:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion from "
      "peer 10.0.0.7<54862> with error 12, opcode 1, len 0, vendor err 129";
  FailureVerdict v = classify_failure(FailureEvidence{code(1), false, {"alpha-n1 step 4", ib}},
                                      {"alpha-n1", "alpha-n3", "alpha-n3", "alpha-n30"});
  EXPECT_EQ(v.cause, ExitCause::network_error);
  EXPECT_THAT(v.named_nodes, ElementsAre("alpha-n3"));
  v = classify_failure(FailureEvidence{code(1), false, {kWatchdog}}, {"alpha-n1"});
  EXPECT_THAT(v.named_nodes, IsEmpty()) << "the line names no node";
}

TEST(FailureClassifier, ClassifyExitIsTheClassifierWithoutALog) {
  EXPECT_EQ(classify_exit(code(0), false), ExitCause::succeeded);
  EXPECT_EQ(classify_exit(code(2), false), ExitCause::user_error);
  EXPECT_EQ(classify_exit(code(128 + SIGTERM), false), ExitCause::killed_by_signal);
  EXPECT_EQ(classify_exit(sig(SIGKILL), false), ExitCause::killed_by_signal);
  EXPECT_EQ(classify_exit(code(1), true), ExitCause::cancelled);
  EXPECT_EQ(classify_exit(ExitStatus{}, false), ExitCause::lost);
  ExitStatus lost = code(0);
  lost.node_lost = true;
  EXPECT_EQ(classify_exit(lost, false), ExitCause::node_lost);
  ExitStatus preempted = sig(SIGTERM);
  preempted.cause = ExitCause::preempted;
  EXPECT_EQ(classify_exit(preempted, false), ExitCause::preempted);
  EXPECT_THAT(classify_failure(FailureEvidence{code(7), false, {}}).evidence,
              HasSubstr("exit code 7"));
}

}  // namespace
}  // namespace orch
