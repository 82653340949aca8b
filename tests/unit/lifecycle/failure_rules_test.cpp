// The rule table of the failure classifier: every rule's own example, embedded in a few lines
// of the ordinary log around it, is classified by that rule; and the table as a whole is sound
// (names unique, every rule has a signature and an example it matches).
#include <gmock/gmock.h>

#include <set>
#include <string>
#include <vector>

#include "scheduler/lifecycle/failure_classifier.h"

namespace orch {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const FailureRule& rule_named(std::string_view name) {
  for (const FailureRule& r : failure_rules()) {
    if (r.name == name) return r;
  }
  ADD_FAILURE() << "no rule " << name;
  static const FailureRule none{"", ExitCause::none, {}, ""};
  return none;
}

ExitStatus exit_code(int code) {
  ExitStatus s;
  s.exit_code = code;
  return s;
}

FailureVerdict classify(std::vector<std::string> log, ExitStatus status = exit_code(1),
                        std::vector<std::string> nodes = {}) {
  return classify_failure(FailureEvidence{std::move(status), false, std::move(log)}, nodes);
}

// The rule's example among ordinary lines (before and after), classified by that very rule.
void expect_rule(std::string_view name, const std::vector<std::string>& before,
                 const std::vector<std::string>& after, ExitStatus status = exit_code(1)) {
  const FailureRule& rule = rule_named(name);
  std::vector<std::string> log = before;
  log.emplace_back(rule.example);
  log.insert(log.end(), after.begin(), after.end());
  FailureVerdict v = classify(log, status);
  EXPECT_EQ(v.rule, name);
  EXPECT_EQ(v.cause, rule.cause) << to_string(v.cause);
  EXPECT_FALSE(v.evidence.empty());
  EXPECT_LE(v.evidence.size(), 300u);
}

const std::vector<std::string> kTraining = {
    "step 1200 | loss 2.314 | lr 3.0e-04 | 412 ms/step",
    "step 1210 | loss 2.309 | lr 3.0e-04 | 409 ms/step",
};

TEST(FailureRuleTable, EveryExampleIsClassifiedByItsOwnRule) {
  for (const FailureRule& rule : failure_rules()) {
    SCOPED_TRACE(std::string(rule.name));
    EXPECT_FALSE(rule.example.empty());
    EXPECT_TRUE(rule_matches(rule, rule.example));
    FailureVerdict v = classify({std::string(rule.example)});
    EXPECT_EQ(v.rule, rule.name) << "an earlier rule shadows this one";
    EXPECT_EQ(v.cause, rule.cause);
  }
}

TEST(FailureRuleTable, NamesAreUniqueAndEveryRuleHasASignature) {
  std::set<std::string_view> names;
  for (const FailureRule& rule : failure_rules()) {
    EXPECT_TRUE(names.insert(rule.name).second) << "duplicate rule " << rule.name;
    EXPECT_FALSE(rule.all_of.empty() && rule.any_of.empty()) << rule.name;
    EXPECT_NE(rule.cause, ExitCause::none) << rule.name;
    EXPECT_NE(rule.cause, ExitCause::succeeded) << rule.name;
    EXPECT_NE(rule.cause, ExitCause::cancelled) << rule.name;
  }
}

TEST(FailureRuleTable, AnOrdinaryLogMatchesNoRule) {
  FailureVerdict v = classify(kTraining);
  EXPECT_EQ(v.rule, "exit-code");
  EXPECT_EQ(v.cause, ExitCause::user_error);
}

TEST(FailureRules, GpuFallenOffTheBus) {
  expect_rule("gpu-fallen-off-bus", kTraining, {"terminate called after throwing an instance"});
  // The driver also says it without an Xid.
  FailureVerdict v = classify({"NVRM: The NVIDIA GPU 0000:b3:00.0",
                               "NVRM: fallen off the bus and is not responding to commands."});
  EXPECT_EQ(v.cause, ExitCause::gpu_error);
}

TEST(FailureRules, XidFatal) {
  expect_rule("xid-fatal", kTraining, {"RuntimeError: CUDA error: unspecified launch failure"});
  // Xid 13 (an SM exception) is usually the application's own fault: not a GPU verdict.
  FailureVerdict v =
      classify({"NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, "
                "Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0)"});
  EXPECT_EQ(v.rule, "exit-code");
  // Xid 45 names an earlier fatal Xid, but is itself only the driver cleaning up.
  v = classify({"NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001"});
  EXPECT_EQ(v.rule, "exit-code");
}

TEST(FailureRules, GpuUncorrectableEcc) {
  expect_rule("gpu-uncorrectable-ecc", kTraining,
              {"CUDA kernel errors might be asynchronously reported at some other API call"});
}

TEST(FailureRules, DiskFull) {
  expect_rule("disk-full",
              {"Traceback (most recent call last):",
               "  File \"/opt/venv/lib/python3.11/site-packages/torch/serialization.py\", "
               "line 499, in _save",
               "    zip_file.write_record(name, storage.data_ptr(), num_bytes)"},
              {});
}

TEST(FailureRules, DiskQuota) {
  expect_rule("disk-quota", {"12/09 06:49:23 - mmengine - INFO - Saving checkpoint at 14 epochs"},
              {});
}

TEST(FailureRules, InputOutputError) {
  expect_rule("io-error", {"[2025-09-11 10:01:02] saving checkpoint iter_0000200"},
              {"[rank0]: exiting"});
}

TEST(FailureRules, StaleFileHandle) {
  expect_rule("stale-file-handle", {"Traceback (most recent call last):"}, {});
}

TEST(FailureRules, CheckpointWriteFailed) {
  expect_rule("checkpoint-write-failed",
              {"Traceback (most recent call last):",
               "  File \".../torch/serialization.py\", line 965, in save"},
              {"", "During handling of the above exception, another exception occurred:"});
}

TEST(FailureRules, CudaOutOfMemory) {
  expect_rule("cuda-oom",
              {"Traceback (most recent call last):",
               "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py\", "
               "line 114, in forward",
               "    return F.linear(input, self.weight, self.bias)"},
              {});
  // torch 2.5 spells it torch.OutOfMemoryError.
  FailureVerdict v =
      classify({"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                "4.22 GiB. GPU 0 has a total capacity of 15.69 GiB"});
  EXPECT_EQ(v.rule, "cuda-oom");
}

TEST(FailureRules, SlurmOomKill) {
  // Killed by the cgroup's OOM killer: a signal, still the job's own memory.
  ExitStatus killed;
  killed.signal = 9;
  expect_rule("slurm-oom-kill", kTraining, {"srun: error: sdumont6156: task 0: Out Of Memory"},
              killed);
}

TEST(FailureRules, HostOomKiller) {
  expect_rule("host-oom-killer", {"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/"},
              {"oom_reaper: reaped process 25315 (python3), now anon-rss:0kB"}, exit_code(137));
}

TEST(FailureRules, CudaIllegalMemoryAccess) {
  expect_rule("cuda-illegal-memory-access", kTraining,
              {"For debugging consider passing CUDA_LAUNCH_BLOCKING=1."});
}

TEST(FailureRules, NcclWatchdogTimeout) {
  expect_rule("nccl-watchdog-timeout", kTraining,
              {"[rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID "
               "0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog "
               "at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807."});
}

TEST(FailureRules, NcclSystemError) {
  expect_rule("nccl-system-error", {"NCCL version 2.18.1+cuda12.1"}, {});
  FailureVerdict v = classify({"RuntimeError: NCCL Error 2: unhandled system error"});
  EXPECT_EQ(v.rule, "nccl-system-error");
}

TEST(FailureRules, NcclInfinibandError) {
  expect_rule(
      "nccl-ib-error",
      {"gpu5:35917:35917 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.5<0>"},
      {"gpu5:35917:35994 [0] NCCL INFO include/net.h:34 -> 2"});
  // The NCCL INFO line that names the IB devices is not an error.
  FailureVerdict v =
      classify({"gpu5:35917:35917 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0"});
  EXPECT_EQ(v.rule, "exit-code");
}

TEST(FailureRules, ConnectionReset) {
  expect_rule("connection-reset", {"gpu-server320 [5] NCCL INFO Bootstrap : Using eth0"},
              {"gpu-server320 [5] NCCL INFO misc/socket.cc:64 -> 6"});
}

TEST(FailureRules, PythonTraceback) {
  FailureVerdict v =
      classify({"step 3 | loss 2.9",
                "Traceback (most recent call last):", "  File \"train.py\", line 57, in <module>",
                "    main(cfg)", "KeyError: 'lr_schedule'", "exiting"});
  EXPECT_EQ(v.rule, "python-traceback");
  EXPECT_EQ(v.cause, ExitCause::user_error);
  EXPECT_EQ(v.evidence, "KeyError: 'lr_schedule'") << "the exception, not the Traceback line";
  EXPECT_THAT(v.named_nodes, IsEmpty());
}

TEST(FailureRules, PythonTracebackUnderTorchrunRankPrefixes) {
  FailureVerdict v =
      classify({"[rank3]: Traceback (most recent call last):",
                "[rank3]:   File \"/workspace/naifu/trainer.py\", line 58, in <module>",
                "[rank3]:     main()", "[rank3]: ValueError: expected 4 dims, got 3"});
  EXPECT_EQ(v.rule, "python-traceback");
  EXPECT_EQ(v.evidence, "[rank3]: ValueError: expected 4 dims, got 3");
}

TEST(FailureRules, ChainedTracebacksNameTheLastException) {
  FailureVerdict v =
      classify({"Traceback (most recent call last):", "  File \"a.py\", line 1", "KeyError: 'x'",
                "", "During handling of the above exception, another exception occurred:", "",
                "Traceback (most recent call last):", "  File \"a.py\", line 3",
                "RuntimeError: config broken"});
  EXPECT_EQ(v.evidence, "RuntimeError: config broken");
}

TEST(FailureRules, NodesNamedInTheEvidenceLine) {
  const FailureRule& rule = rule_named("nccl-ib-error");
  FailureVerdict v = classify({std::string(rule.example)}, exit_code(1), {"gpu4", "gpu5", "gpu"});
  EXPECT_THAT(v.named_nodes, ElementsAre("gpu5")) << "a whole name, not a prefix of one";
  v = classify({std::string(rule.example)}, exit_code(1), {"gpu50", "alpha-gpu5"});
  EXPECT_THAT(v.named_nodes, IsEmpty());
}

}  // namespace
}  // namespace orch
