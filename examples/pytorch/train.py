#!/usr/bin/env python3
"""A PyTorch training job as a user writes one from docs/progress-protocol.md.

A small MLP on synthetic regression data, on the CPU: it reports progress and checkpoint lines
on rank 0, writes checkpoints only under $ORCH_CHECKPOINT_DIR (atomically), resumes from
$ORCH_RESUME_FROM (failing loudly if that cannot be loaded), saves and exits on SIGTERM, saves and
goes on on SIGUSR1. When the job was given a secret as HF_TOKEN (secret_env: {HF_TOKEN: {secret:
NAME}}), it says so by printing the secret's SHA-256, never the value.

    command: python3 /abs/path/to/train.py --steps 200 --ckpt-every 20
"""
import argparse
import hashlib
import json
import os
import signal
import sys
import time

import torch


def report(**fields):
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


def save(model, opt, step, ckpt_dir):
    t0 = time.perf_counter()
    path = os.path.join(ckpt_dir, f"step-{step}.pt")
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, path + ".tmp")
    with open(path + ".tmp", "rb") as f:
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)  # never a half-written checkpoint at `path`
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
            save(model, opt, step, ckpt_dir)
            signals.save_now = False
        if signals.stop:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
