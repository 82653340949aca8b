#!/usr/bin/env python3
"""Evaluates the last checkpoint of a training job, as a job that waits for it (docs/config.md,
"Dependencies"): submitted with `after: [{job: train}]` (or `orchestrate job submit --after
train`), it starts once the job named train succeeded, where train's newest verified checkpoint
lies, and reads that checkpoint's path from $ORCH_AFTER_TRAIN_CHECKPOINT.

The model is examples/pytorch/train.py's (the same --dim); the data is drawn as train.py draws
it, from a seed of its own. It prints one line, `evaluated step N of PATH: mse X`, and exits 0;
a checkpoint that is not there or cannot be loaded is exit 65, never an evaluation of nothing.

    name: eval
    command: python3 /abs/path/to/evaluate.py --dim 64
    after: [{job: train}]
"""
import argparse
import os
import sys

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--after", default="train", help="the name of the job it waited for")
    args = p.parse_args()
    var = "ORCH_AFTER_" + "".join(c if c.isalnum() else "_" for c in args.after.upper())
    var += "_CHECKPOINT"
    path = os.environ.get(var)
    if not path:
        print(f"{var} is not set: {args.after} saved no verified checkpoint", file=sys.stderr)
        return 65
    try:
        state = torch.load(path)
    except Exception as e:  # never evaluate a fresh model silently
        print(f"cannot load {path}: {e}", file=sys.stderr)
        return 65
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(args.dim, args.dim), torch.nn.ReLU(),
                                torch.nn.Linear(args.dim, 1))
    model.load_state_dict(state["model"])
    target = torch.randn(args.dim, 1)
    torch.manual_seed(1)
    x = torch.randn(args.batch, args.dim)
    with torch.no_grad():
        mse = torch.nn.functional.mse_loss(model(x), x @ target).item()
    print(f"evaluated step {state['step']} of {path}: mse {mse:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
