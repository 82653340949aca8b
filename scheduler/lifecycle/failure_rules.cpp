// The failure classifier's rule table: every log signature orchestrate knows, in precedence
// order (first match wins), each with the real log excerpt it was written from and the public
// thread that excerpt comes from. tests/unit/lifecycle checks that every example is classified
// by its own rule, so a rule cannot be added without one. docs/failure-classes.md explains the
// choices (why a CUDA illegal memory access is the job's own fault, why root causes come
// before the network timeouts they cause on the other ranks).
//
// Provider causes (Slurm NODE_FAIL, PREEMPTED, TIMEOUT, OUT_OF_MEMORY, pod OOMKilled) and
// orchestrate's own (cancelled, hang) never reach this table: they are decided before it.

#include "scheduler/lifecycle/failure_classifier.h"

namespace orch {

// function-length: table (one rule per log signature, in precedence order)
std::span<const FailureRule> failure_rules() {
  using C = ExitCause;
  static const std::vector<FailureRule> rules = {
      // ---- the GPU: the node's hardware, not the job ---------------------------------------
      // https://github.com/NVIDIA/NVSentinel/issues/155 (the driver also says it without an Xid)
      {"gpu-fallen-off-bus",
       C::gpu_error,
       {"fallen off the bus"},
       "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus"},
      // Xids the driver raises for hardware the job cannot have caused: 48 double-bit ECC,
      // 61/62 internal micro-controller halt, 64 row-remapping failure, 74 NVLink, 79 off the
      // bus, 94/95 contained/uncontained ECC, 119/120 GSP, 140 unrecovered ECC. Xid 13, 31, 43
      // and 45 are left out: they are usually the application's own fault (or an echo).
      // https://github.com/leptonai/gpud/pull/1174
      {"xid-fatal",
       C::gpu_error,
       {"NVRM: Xid ("},
       "NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, Contained ECC error",
       {"): 48,", "): 61,", "): 62,", "): 64,", "): 74,", "): 79,", "): 94,", "): 95,", "): 119,",
        "): 120,", "): 140,"}},
      // https://github.com/vllm-project/vllm/issues/5222
      {"gpu-uncorrectable-ecc",
       C::gpu_error,
       {"uncorrectable ECC error"},
       "RuntimeError: CUDA error: uncorrectable ECC error encountered"},

      // ---- storage ----------------------------------------------------------------------------
      // https://github.com/babysor/MockingBird/issues/774 (a checkpoint write, torch.save)
      {"disk-full",
       C::io_error,
       {"No space left on device"},
       "OSError: [Errno 28] No space left on device"},
      // https://github.com/open-mmlab/mmdetection/issues/12069 (saving a checkpoint)
      {"disk-quota",
       C::io_error,
       {"Disk quota exceeded"},
       "OSError: [Errno 122] Disk quota exceeded"},
      // https://github.com/THUDM/slime/issues/326 (Megatron's async checkpoint writer)
      {"io-error",
       C::io_error,
       {"Input/output error"},
       "ERROR: megatron.core.dist_checkpointing.strategies.filesystem_async: Local process 0 "
       "encountered an error: [Errno 5] Input/output error"},
      // https://github.com/hiyouga/LlamaFactory/issues/3243 (NFS)
      {"stale-file-handle",
       C::io_error,
       {},
       "OSError: [Errno 116] Stale file handle:",
       {"Stale file handle", "Stale NFS file handle"}},
      // https://github.com/rwth-i6/returnn/issues/1829 (a checkpoint write that failed or timed
      // out on a shared filesystem)
      {"checkpoint-write-failed",
       C::io_error,
       {"PytorchStreamWriter failed writing file"},
       "RuntimeError: [enforce fail at inline_container.cc:857] . PytorchStreamWriter failed "
       "writing file data/322: file write failed"},

      // ---- memory: the job asked for more than there is (user budget) ------------------------
      // https://github.com/carolchenyx/MGFN./issues/35
      {"cuda-oom",
       C::out_of_memory,
       {},
       "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB. GPU 0 has a "
       "total capacty of 6.00 GiB of which 0 bytes is free.",
       {"CUDA out of memory", "torch.OutOfMemoryError", "torch.cuda.OutOfMemoryError"}},
      // https://github.com/nextflow-io/nextflow/issues/5932 (Slurm's cgroup OOM killer)
      {"slurm-oom-kill",
       C::out_of_memory,
       {},
       "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks "
       "have been OOM Killed.",
       {"oom_kill event", "oom-kill event", ": Out Of Memory"}},
      // https://github.com/pcyin/tranX/issues/41 (the kernel's OOM killer, as dmesg prints it)
      {"host-oom-killer",
       C::out_of_memory,
       {"Out of memory: Killed process"},
       "Out of memory: Killed process 25315 (python3) total-vm:53312244kB, anon-rss:31451456kB"},

      // ---- the job's own CUDA fault (before the network: the other ranks time out on it) ------
      // Usually a bug (an index out of range, a kernel race, tensors on the wrong device). When
      // the GPU is at fault the driver logs an Xid, which the gpu rules above catch first.
      // https://github.com/hpcaitech/Open-Sora/issues/694
      {"cuda-illegal-memory-access",
       C::user_error,
       {"an illegal memory access was encountered"},
       "RuntimeError: CUDA error: an illegal memory access was encountered"},

      // ---- the network between the ranks -----------------------------------------------------
      // https://github.com/XPixelGroup/BasicSR/issues/737
      {"nccl-watchdog-timeout",
       C::network_error,
       {"Watchdog caught collective operation timeout"},
       "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
       "collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, "
       "NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out."},
      // https://github.com/NVIDIA/nccl/issues/1016 (also "NCCL Error 2: unhandled system error")
      {"nccl-system-error",
       C::network_error,
       {"unhandled system error"},
       "RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/"
       "ProcessGroupNCCL.cpp:1275, unhandled system error (run with NCCL_DEBUG=INFO for details)",
       {"NCCL error", "NCCL Error", "NCCL failure"}},
      // https://github.com/NVIDIA/nccl-tests/issues/24 (an InfiniBand completion error)
      {"nccl-ib-error",
       C::network_error,
       {"NCCL WARN NET/IB"},
       "gpu5:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error "
       "12, opcode 1, len 0, vendor err 129",
       {"Got completion", "failed", "error"}},
      // https://github.com/NVIDIA/nccl/issues/1920
      {"connection-reset",
       C::network_error,
       {"Connection reset by peer"},
       "gpu-server320 [5] misc/socket.cc:46 NCCL WARN socketProgressOpt: Call to send to "
       "10.44.137.149<52905> failed : Connection reset by peer"},

      // ---- the job's own code, when nothing above explains it --------------------------------
      // https://github.com/pytorch/pytorch/issues/74146
      {"python-traceback",
       C::user_error,
       {"Traceback (most recent call last)"},
       "Traceback (most recent call last):",
       {},
       /*own_exit_only=*/true,
       /*python_exception=*/true},
  };
  return rules;
}

}  // namespace orch
