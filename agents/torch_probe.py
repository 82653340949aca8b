"""orchestrate's bundled PyTorch probe (agents/README.md, "The torch probe").

orchestrate-agent embeds this file, writes it to a private temporary file and runs it with the
cluster's own interpreter: `<torch_python> torch_probe.py --seconds S`. It measures, per visible
GPU, dense GEMM throughput and memory copy bandwidth, and the all-reduce bus bandwidth between
all local GPUs (torch.distributed, one process per GPU). Without CUDA it measures the CPU instead
(float32 GEMM, memory copy, gloo all-reduce between two local processes), so it runs anywhere
torch does.

It prints exactly one JSON line on stdout and exits 0, whatever it found; what went wrong is in
its "error" member, never a traceback alone. Its shape:
  {"device":"cuda","dtype":"bfloat16","version":"2.3.0","world":8,"seconds":12.3,
   "gpus":[{"index":0,"name":"NVIDIA H100 80GB HBM3","tflops":712.5,"hbm_gb_s":2950.1}],
   "allreduce_busbw_gb_s":410.2,"allreduce_bytes":268435456,"n":8192}
Standard library and torch only.
"""

import json
import math
import os
import sys
import tempfile
import time
import traceback

# Index GPUs as nvidia-smi does (by PCI bus id), not fastest first, so "gpu 3" is the same GPU
# in every reading. Must be set before CUDA starts.
os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")

# Shares of the time budget: GEMM, memory copy, then the all-reduce, which gets the rest (it
# includes starting one process per GPU, each importing torch: seconds on a busy CPU). On CUDA
# every process measures its own GPU first, all at once, so the shares are of the whole budget
# there too.
GEMM_SHARE = 0.2
COPY_SHARE = 0.1
# The budget plans the measuring; starting the per-GPU processes (each imports torch and sets up
# CUDA and NCCL: seconds each, more from a network filesystem) may run past it, and is waited
# for this much longer, still within the agent's own limit (kTorchStartupGraceS, 60 s, later).
STARTUP_GRACE_S = 45.0


def emit(result):
    sys.stdout.write(json.dumps(result, separators=(",", ":"), allow_nan=False) + "\n")
    sys.stdout.flush()


def short_error(e):
    text = "%s: %s" % (type(e).__name__, e)
    return text.splitlines()[0][:300] if text else type(e).__name__


def rounded(v):
    """Four significant digits (a CPU's 0.05123 TFLOPS and a GPU's 712.5 alike)."""
    return None if v is None or not math.isfinite(v) else float("%.4g" % v)


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_rounds(torch, device, step, work_per_call, budget_s, unit):
    """Calls step() in rounds until budget_s has passed (at least one round after a warm-up
    call and a timing call), each round sized to take about 0.1 s; returns the best round's work
    per second / unit."""
    end = time.perf_counter() + budget_s
    sync(torch, device)
    step()  # warm-up: kernels chosen, memory touched
    sync(torch, device)
    start = time.perf_counter()
    step()
    sync(torch, device)
    one = max(time.perf_counter() - start, 1e-6)
    best = work_per_call / one / unit
    calls = max(1, min(1000, int(0.1 / one)))
    rounds = 0
    while rounds < 1 or time.perf_counter() + one * calls < end:
        sync(torch, device)
        t0 = time.perf_counter()
        for _ in range(calls):
            step()
        sync(torch, device)
        elapsed = time.perf_counter() - t0
        if elapsed > 0:
            best = max(best, calls * work_per_call / elapsed / unit)
        rounds += 1
        if rounds >= 1000:
            break
    return best


def measure_gemm(torch, device, dtype, n, budget_s):
    """Dense n x n x n matmuls; TFLOPS of the best round. Halves n when memory is short."""
    while True:
        try:
            a = torch.randn(n, n, device=device, dtype=torch.float32).to(dtype)
            b = torch.randn(n, n, device=device, dtype=torch.float32).to(dtype)
            c = torch.empty(n, n, device=device, dtype=dtype)
            break
        except RuntimeError as e:  # out of memory on a small or busy GPU
            if n <= 512 or "out of memory" not in str(e):
                raise
            n //= 2
    tflops = timed_rounds(torch, device, lambda: torch.matmul(a, b, out=c), 2.0 * n**3,
                          budget_s, 1e12)
    del a, b, c
    return tflops, n


def measure_copy(torch, device, nbytes, budget_s):
    """Device-to-device copy of nbytes; GB/s counting the bytes read and written."""
    while True:
        try:
            src = torch.empty(nbytes, device=device, dtype=torch.uint8).fill_(7)
            dst = torch.empty(nbytes, device=device, dtype=torch.uint8)
            break
        except RuntimeError as e:
            if nbytes <= (16 << 20) or "out of memory" not in str(e):
                raise
            nbytes //= 2
    gb_s = timed_rounds(torch, device, lambda: dst.copy_(src), 2.0 * nbytes, budget_s, 1e9)
    del src, dst
    return gb_s


def measure_one(torch, device, dtype, n, copy_bytes, budget_s):
    """GEMM and copy on one device; a dict for "gpus" (an error instead of what failed)."""
    entry = {}
    try:
        tflops, used_n = measure_gemm(torch, device, dtype, n, budget_s * GEMM_SHARE
                                      / (GEMM_SHARE + COPY_SHARE))
        entry["tflops"] = rounded(tflops)
        entry["n"] = used_n
    except Exception as e:  # noqa: BLE001 - reported, not raised
        entry["error"] = "GEMM: " + short_error(e)
    try:
        entry["hbm_gb_s"] = rounded(
            measure_copy(torch, device, copy_bytes,
                         budget_s * COPY_SHARE / (GEMM_SHARE + COPY_SHARE)))
    except Exception as e:  # noqa: BLE001
        entry["error"] = (entry.get("error", "") + "; " if "error" in entry else "") + \
            "copy: " + short_error(e)
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return entry


def allreduce_busbw(torch, dist, device, nbytes, budget_s):
    """All-reduce of nbytes (float32) over the group; the best round's bus bandwidth in GB/s as
    nccl-tests defines it: algbw = bytes / time, busbw = algbw * 2 (n - 1) / n. Every rank takes
    the same decisions (rank 0's, broadcast), so the collectives match."""
    world = dist.get_world_size()
    x = torch.ones(nbytes // 4, device=device, dtype=torch.float32)
    plan = torch.zeros(2, device=device, dtype=torch.float32)  # [go on, calls next round]
    for _ in range(2):  # warm-up: connections set up, buffers registered
        dist.all_reduce(x)
    sync(torch, device)
    best = 0.0
    end = time.perf_counter() + budget_s
    calls = 1
    rounds = 0
    while True:
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(calls):
            dist.all_reduce(x)
        sync(torch, device)
        elapsed = time.perf_counter() - t0
        algbw = calls * nbytes / elapsed / 1e9 if elapsed > 0 else 0.0
        best = max(best, algbw * 2 * (world - 1) / world)
        rounds += 1
        go_on = rounds < 3 or (time.perf_counter() < end and rounds < 200)
        plan[0] = 1.0 if go_on else 0.0
        plan[1] = max(1, min(100, int(0.1 / max(elapsed / calls, 1e-6))))  # rounds of ~0.1 s
        dist.broadcast(plan, 0)
        if plan[0].item() == 0.0:
            return best
        calls = int(plan[1].item())


def worker(rank, world, plan, queue):
    """One process of the all-reduce (torch.multiprocessing spawn). On CUDA it first measures its
    own GPU, all GPUs at once (as a job loads them), and sends that before the collective."""
    try:
        import torch
        import torch.distributed as dist

        device = torch.device("cuda", rank) if plan["device"] == "cuda" else torch.device("cpu")
        if device.type == "cuda":
            torch.cuda.set_device(device)
            dtype = getattr(torch, plan["dtype"])
            entry = measure_one(torch, device, dtype, plan["n"], plan["copy_bytes"],
                                plan["measure_s"])
            entry["index"] = rank
            entry["name"] = torch.cuda.get_device_name(device)
            queue.put(("gpu", rank, entry))
        import datetime
        left = max(1.0, plan["hard_deadline"] - time.time())
        dist.init_process_group(plan["backend"], init_method=plan["init"], rank=rank,
                                world_size=world, timeout=datetime.timedelta(seconds=left))
        bw = allreduce_busbw(torch, dist, device, plan["allreduce_bytes"],
                             max(0.2, (plan["deadline"] - time.time()) * 0.5))
        queue.put(("allreduce", rank, bw))
        dist.destroy_process_group()
    except Exception as e:  # noqa: BLE001
        queue.put(("error", rank, short_error(e)))


def run_workers(torch, plan, world, result):
    """Starts `world` processes, collects what they send until the hard deadline, stops them."""
    import queue as queue_module

    mp = torch.multiprocessing.get_context("spawn")
    queue = mp.Queue()
    procs = []
    for rank in range(world):
        p = mp.Process(target=worker, args=(rank, world, plan, queue), daemon=True)
        p.start()
        procs.append(p)
    gpus, errors, busbw = {}, [], None
    expected = world * (2 if plan["device"] == "cuda" else 1)
    got = 0
    while got < expected:
        left = plan["hard_deadline"] - time.time()
        if left <= 0:
            errors.append("the all-reduce did not finish within %.0f s (the budget and %.0f s to "
                          "start its processes)" % (plan["hard_deadline"] - plan["started"],
                                                    STARTUP_GRACE_S))
            break
        try:
            kind, rank, value = queue.get(timeout=min(left, 0.5))
        except queue_module.Empty:
            if not any(p.is_alive() for p in procs):
                errors.append("a probe process exited without a result (exit codes %s)"
                              % [p.exitcode for p in procs])
                break
            continue
        got += 1
        if kind == "gpu":
            gpus[rank] = value
        elif kind == "allreduce":
            if rank == 0:
                busbw = value
        else:
            errors.append("rank %d: %s" % (rank, value))
            if plan["device"] == "cuda" and rank not in gpus:
                got += 1  # it will send no GPU entry either
    stop_by = time.time() + (2.0 if not errors else 0.0)  # a clean exit gets a moment
    for p in procs:
        p.join(timeout=max(0.0, stop_by - time.time()))
        if p.is_alive():
            p.kill()
            p.join(timeout=1)
    if gpus:
        result["gpus"] = [gpus[r] for r in sorted(gpus)]
    if busbw is not None:
        result["allreduce_busbw_gb_s"] = rounded(busbw)
        result["allreduce_bytes"] = plan["allreduce_bytes"]
    return errors


def probe(args, started):
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - ImportError, or a broken install's own error
        return {"error": "cannot import torch with %s (python %s): %s"
                % (sys.executable, sys.version.split()[0], short_error(e))}
    result = {"version": torch.__version__}
    cuda = args.device != "cpu" and torch.cuda.is_available() and torch.cuda.device_count() > 0
    if args.device == "cuda" and not cuda:
        return dict(result, error="CUDA is not available to torch %s" % torch.__version__)
    deadline = started + args.seconds
    errors = []
    if cuda:
        world = torch.cuda.device_count()
        result.update(device="cuda", dtype="bfloat16", world=world)
        plan = {"device": "cuda", "dtype": "bfloat16", "backend": "nccl", "n": args.n or 8192,
                "copy_bytes": 1 << 30, "allreduce_bytes": 256 << 20,
                "measure_s": args.seconds * (GEMM_SHARE + COPY_SHARE)}
    else:
        world = max(1, args.cpu_world)
        result.update(device="cpu", dtype="float32", world=world)
        plan = {"device": "cpu", "dtype": "float32", "backend": "gloo", "n": args.n or 512,
                "copy_bytes": 128 << 20, "allreduce_bytes": 16 << 20}
        entry = measure_one(torch, torch.device("cpu"), torch.float32, plan["n"],
                            plan["copy_bytes"], args.seconds * (GEMM_SHARE + COPY_SHARE))
        entry["index"] = 0
        result["gpus"] = [entry]
    plan.update(deadline=deadline, started=started,
                hard_deadline=deadline + STARTUP_GRACE_S)
    if world >= 2 and torch.distributed.is_available():
        with tempfile.TemporaryDirectory(prefix="orch-torch-probe-") as rdv:
            plan["init"] = "file://" + os.path.join(rdv, "rendezvous")
            errors += run_workers(torch, plan, world, result)
    elif world >= 2:
        errors.append("torch.distributed is not available in this build of torch")
    elif cuda:  # one GPU: nothing to all-reduce with, measure it here
        entry = measure_one(torch, torch.device("cuda", 0), torch.bfloat16, plan["n"],
                            plan["copy_bytes"], plan["measure_s"])
        entry.update(index=0, name=torch.cuda.get_device_name(0))
        result["gpus"] = [entry]
    for g in result.get("gpus", []):
        if "error" in g:
            errors.append("gpu %d: %s" % (g["index"], g.pop("error")))
    if cuda and len(result.get("gpus", [])) < world:
        errors.append("%d of %d GPUs measured" % (len(result.get("gpus", [])), world))
    if errors:
        result["error"] = "; ".join(errors)
    return result


def main(argv):
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="time budget in total")
    parser.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    parser.add_argument("--cpu-world", type=int, default=2,
                        help="processes of the gloo all-reduce without CUDA")
    parser.add_argument("--n", type=int, default=0, help="GEMM size (default 8192, CPU 512)")
    started = time.time()
    try:
        args = parser.parse_args(argv)
        if not (math.isfinite(args.seconds) and 0 < args.seconds <= 3600):
            raise ValueError("--seconds must be in (0, 3600]")
        result = probe(args, started)
    except SystemExit as e:  # argparse's usage error
        result = {"error": "bad arguments %s (exit %s)" % (argv, e.code)}
    except BaseException as e:  # noqa: BLE001 - one JSON line, whatever happened
        tb = traceback.extract_tb(e.__traceback__)
        where = " at line %d" % tb[-1].lineno if tb else ""
        result = {"error": short_error(e) + where}
    result["seconds"] = round(time.time() - started, 2)
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
