#!/usr/bin/env python3
"""A data-parallel PyTorch job (DistributedDataParallel over gloo, on the CPU) that uses the
orchestrate client (python/, docs/progress-protocol.md) the way a user would.

Each task of the job is one rank. The ranks meet where the launch contract says
(ORCH_MASTER_ADDR:ORCH_MASTER_PORT, ORCH_TASK_RANK of ORCH_NTASKS; docs/launch-contract.md) and
train a small next-token model on synthetic sequences: the batch of a step is drawn from an RNG
seeded by the step and the rank, so a resumed run computes what an uninterrupted one would.

- Progress: one line per step from rank 0 with the loss averaged over the ranks, the step's
  time and tokens = global batch x sequence length.
- Checkpoints: every --ckpt-every steps, on a save request (SIGUSR1, save_requested()) and on a
  stop (SIGTERM, stop_requested()), rank 0 writes $ORCH_CHECKPOINT_DIR/step-<N>.pt atomically
  and reports it. A save asked for prints `saved on request at step N` and training goes on; a
  stop saves and exits 143. orchestrate.requests() all-reduces both flags, so every rank acts
  on the same step.
- Resume: every rank loads orchestrate.resume_path() (ORCH_RESUME_FROM) and goes on at its
  step + 1; a checkpoint that cannot be loaded is exit 65, never a silent fresh start.

    command: exec python3 /srv/code/train_ddp.py --steps 300 --ckpt-every 20
    resources: {nodes: 2, gpus_per_node: 2, tasks_per_node: 2}

It needs `orchestrate` importable: `pip install ./python`, or python/orchestrate/__init__.py
copied next to this file as orchestrate.py.
"""
import argparse
import datetime
import os
import sys
import time

import orchestrate  # install the handlers before anything forks or blocks

orchestrate.install_signal_handlers()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--ckpt-every", type=int, default=20, help="0: only when asked or stopped")
    p.add_argument("--batch", type=int, default=8, help="sequences per rank and step")
    p.add_argument("--seq-len", type=int, default=32)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--step-delay-s", type=float, default=0.0, help="sleep in each step (demos)")
    p.add_argument("--rendezvous-timeout-s", type=float, default=120)
    return p.parse_args()


def env_int(names, default=None):
    for name in names:
        if os.environ.get(name):
            return int(os.environ[name])
    return default


def join_gang(timeout_s):
    """init_process_group from the launch contract's variables; (rank, world)."""
    rank = env_int(("ORCH_TASK_RANK", "RANK"), 0)
    world = env_int(("ORCH_NTASKS", "WORLD_SIZE"), 1)
    addr = os.environ.get("ORCH_MASTER_ADDR") or os.environ.get("MASTER_ADDR") or "127.0.0.1"
    port = env_int(("ORCH_MASTER_PORT", "MASTER_PORT"), 29500)
    dist.init_process_group("gloo", init_method="tcp://%s:%d" % (addr, port), rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=timeout_s))
    if world > 1:
        print("rank %d/%d node %s master %s:%d" % (rank, world, os.environ.get("ORCH_NODE_NAME", "-"),
                                                 addr, port), file=sys.stderr, flush=True)
    return rank, world


class NextToken(torch.nn.Module):
    """Embedding, one hidden layer, a projection back to the vocabulary."""

    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.hidden = torch.nn.Linear(dim, dim)
        self.out = torch.nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.out(torch.tanh(self.hidden(self.embed(tokens))))


def batch_of(step, rank, args):
    """Sequences x[t+1] = (3 x[t] + 7) mod vocab from random starts, with one token in ten
    replaced by noise: learnable, and the same for the same step and rank on every attempt."""
    g = torch.Generator().manual_seed(step * 1009 + rank)
    x = torch.empty(args.batch, args.seq_len + 1, dtype=torch.long)
    x[:, 0] = torch.randint(0, args.vocab, (args.batch,), generator=g)
    for t in range(args.seq_len):
        x[:, t + 1] = (3 * x[:, t] + 7) % args.vocab
    noise = torch.rand(x.shape, generator=g) < 0.1
    x[noise] = torch.randint(0, args.vocab, (int(noise.sum()),), generator=g)
    return x[:, :-1], x[:, 1:]


def save(step, model, opt, rank):
    """Rank 0 writes step-<N>.pt in $ORCH_CHECKPOINT_DIR (temp file, fsync, rename) and reports it."""
    if rank != 0:
        return None
    started = time.perf_counter()
    path = os.path.join(os.environ["ORCH_CHECKPOINT_DIR"], "step-%d.pt" % step)
    state = {"step": step, "model": model.module.state_dict(), "opt": opt.state_dict()}
    with orchestrate.atomic_path(path) as tmp:
        torch.save(state, tmp)
    orchestrate.checkpoint(step, path, save_time_s=time.perf_counter() - started)
    return path


def resume(model, opt):
    """The step to go on after: 0 on a fresh start, else the checkpoint's (loaded on every rank)."""
    path = orchestrate.resume_path()
    if not path:
        return 0
    try:
        state = torch.load(path, map_location="cpu")
        model.module.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = int(state["step"])
    except Exception as e:  # never start from scratch silently
        print("cannot resume from %s: %s" % (path, e), file=sys.stderr, flush=True)
        sys.exit(65)
    if orchestrate.is_rank_zero():
        print("resumed from step %d (%s)" % (step, path), flush=True)
    return step


def main():
    args = parse_args()
    if not os.environ.get("ORCH_CHECKPOINT_DIR"):
        print("ORCH_CHECKPOINT_DIR is not set: run this under orchestrate", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    rank, world = join_gang(args.rendezvous_timeout_s)
    torch.manual_seed(0)  # the same initial weights on every rank
    model = DistributedDataParallel(NextToken(args.vocab, args.dim))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    start = resume(model, opt)
    tokens = orchestrate.tokens(args.batch * world, args.seq_len)
    for step in range(start + 1, args.steps + 1):
        with orchestrate.step(step, tokens=tokens) as s:
            x, y = batch_of(step, rank, args)
            loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, args.vocab), y.reshape(-1))
            opt.zero_grad()
            loss.backward()  # DDP all-reduces the gradients
            opt.step()
            mean = loss.detach().clone()
            dist.all_reduce(mean)
            time.sleep(args.step_delay_s)
            s.report(loss=mean.item() / world)
        save_now, stop = orchestrate.requests()
        if save_now or stop or (args.ckpt_every and step % args.ckpt_every == 0):
            save(step, model, opt, rank)
            if save_now and rank == 0:
                print("saved on request at step %d" % step, flush=True)
        if stop:
            if rank == 0:
                print("stopping after step %d: asked to stop" % step, flush=True)
            # Together: a rank that ends ends the gang's attempt, and would cut rank 0's save short.
            dist.barrier()
            return 143
    dist.barrier()  # every rank is done
    return 0


def leave(code):
    """Exits without tearing the process group down: in PyTorch 1.13 the DDP reducer's destructor
    at interpreter exit may join a gloo thread that waits for the GIL the exiting thread holds,
    and the rank never ends (orchestrate would then call the job hung)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    leave(main())
