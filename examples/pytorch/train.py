#!/usr/bin/env python3
"""A PyTorch training job as a user writes one from docs/progress-protocol.md.

A small MLP on synthetic regression data, on the CPU: it reports progress and checkpoint lines
on rank 0, writes checkpoints only under $ORCH_CHECKPOINT_DIR (atomically), resumes from
$ORCH_RESUME_FROM (failing loudly if that cannot be loaded), saves and exits on SIGTERM, saves and
goes on on SIGUSR1.

Tiered saves (docs/progress-protocol.md, "Tiered checkpoints"): where the cluster gives each node a
directory on its own disk ($ORCH_LOCAL_CHECKPOINT_DIR), a save blocks training only while it
writes there; a background thread then drains the newest one to $ORCH_CHECKPOINT_DIR (at most
$ORCH_DRAIN_BYTES_PER_S bytes a second when set, so it does not crowd the shared filesystem) and
reports that copy too. orchestrate resumes from whichever copy is newest and whole, preferring the
node's own. When the job was given a secret as HF_TOKEN (secret_env: {HF_TOKEN: {secret:
NAME}}), it says so by printing the secret's SHA-256, never the value.

    command: python3 /abs/path/to/train.py --steps 200 --ckpt-every 20
"""
import argparse
import hashlib
import json
import os
import shutil
import signal
import sys
import threading
import time

import torch


PRINT_LOCK = threading.Lock()  # the drain thread reports too: one whole line at a time


def report(**fields):
    with PRINT_LOCK:
        print("@orchestrate " + json.dumps(fields), flush=True)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--ckpt-every", type=int, default=20)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--step-delay-s", type=float, default=0.0)
    return p.parse_args()


class Signals:
    """SIGTERM: save and stop; SIGUSR1: save after this step and go on."""

    def __init__(self):
        self.stop = False
        self.save_now = False
        signal.signal(signal.SIGTERM, lambda *_: setattr(self, "stop", True))
        signal.signal(signal.SIGUSR1, lambda *_: setattr(self, "save_now", True))


def write_atomically(path, write):
    """write(tmp_path), fsync, then rename into place: `path` is never half written."""
    write(path + ".tmp")
    with open(path + ".tmp", "rb") as f:
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


class Drainer:
    """Copies the newest node-local checkpoint to the shared directory in the background.

    Only the newest pending save is drained (an older one still waiting is skipped: the newer
    supersedes it), at most bytes_per_s when given, and each drained copy is reported as the
    shared tier of the same step."""

    def __init__(self, shared_dir, bytes_per_s):
        self.shared_dir = shared_dir
        self.bytes_per_s = bytes_per_s
        self.pending = None
        self.cond = threading.Condition()
        self.closed = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def submit(self, step, local_path):
        with self.cond:
            self.pending = (step, local_path)
            self.cond.notify()

    def close(self):
        """Drains what is pending, then stops (a graceful stop leaves a shared copy)."""
        with self.cond:
            self.closed = True
            self.cond.notify()
        self.thread.join()

    def run(self):
        while True:
            with self.cond:
                while self.pending is None and not self.closed:
                    self.cond.wait()
                if self.pending is None:
                    return
                step, local_path = self.pending
                self.pending = None
            t0 = time.perf_counter()
            shared = os.path.join(self.shared_dir, os.path.basename(local_path))
            write_atomically(shared, lambda tmp: self.copy(local_path, tmp))
            report(event="checkpoint", step=step, path=shared, tier="shared",
                   save_time_s=time.perf_counter() - t0)

    def copy(self, src, dst):
        with open(src, "rb") as fin, open(dst, "wb") as fout:
            if not self.bytes_per_s:
                shutil.copyfileobj(fin, fout)
                return
            chunk = max(1, min(1 << 16, int(self.bytes_per_s)))
            while True:
                block = fin.read(chunk)
                if not block:
                    return
                fout.write(block)
                time.sleep(len(block) / self.bytes_per_s)


def save(model, opt, step, ckpt_dir, drainer=None):
    """One save: to the node's own disk and drained in the background when there is one (then
    only that write blocks training), else straight to the shared directory."""
    t0 = time.perf_counter()
    state = {"model": model.state_dict(), "opt": opt.state_dict(), "step": step}
    local_dir = os.environ.get("ORCH_LOCAL_CHECKPOINT_DIR")
    directory = local_dir if drainer else ckpt_dir
    path = os.path.join(directory, f"step-{step}.pt")
    write_atomically(path, lambda tmp: torch.save(state, tmp))
    if drainer:
        report(event="checkpoint", step=step, path=path, tier="local",
               node=os.environ["ORCH_NODE_NAME"], save_time_s=time.perf_counter() - t0)
        drainer.submit(step, path)
    else:
        report(event="checkpoint", step=step, path=path, save_time_s=time.perf_counter() - t0)


def main():
    args = parse_args()
    ckpt_dir = os.environ["ORCH_CHECKPOINT_DIR"]  # orchestrate made it; write nowhere else
    if os.environ.get("HF_TOKEN"):
        digest = hashlib.sha256(os.environ["HF_TOKEN"].encode()).hexdigest()
        print(f"HF_TOKEN sha256 {digest}", flush=True)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(args.dim, args.dim), torch.nn.ReLU(),
                                torch.nn.Linear(args.dim, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    start = 0
    resume = os.environ.get("ORCH_RESUME_FROM")
    if resume:
        try:
            state = torch.load(resume)
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            start = state["step"]
        except Exception as e:  # never start from scratch silently
            print(f"cannot resume from {resume}: {e}", file=sys.stderr)
            return 65
        print(f"resumed from step {start}", flush=True)
    signals = Signals()
    drainer = None
    if os.environ.get("ORCH_LOCAL_CHECKPOINT_DIR"):
        drainer = Drainer(ckpt_dir, float(os.environ.get("ORCH_DRAIN_BYTES_PER_S") or 0))
    target = torch.randn(args.dim, 1)
    for step in range(start + 1, args.steps + 1):
        t0 = time.perf_counter()
        x = torch.randn(args.batch, args.dim)
        loss = torch.nn.functional.mse_loss(model(x), x @ target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        time.sleep(args.step_delay_s)
        report(event="progress", step=step, tokens=args.batch,
               step_time_s=time.perf_counter() - t0, loss=loss.item())
        if step % args.ckpt_every == 0 or signals.save_now or signals.stop:
            save(model, opt, step, ckpt_dir, drainer)
            signals.save_now = False
        if signals.stop:
            break
    if drainer:
        drainer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
