#!/usr/bin/env python3
"""Data-parallel training of a small next-token model with torch.distributed and the orchestrate
client (python/, docs/progress-protocol.md), for GPUs (NCCL) or, without them, the CPU (gloo).

It joins the gang from the standard variables RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and
MASTER_PORT (init_method env://), so it runs either way a job spec starts it:

- under torchrun, one task per node (`tasks_per_node: 1`), torchrun given the launch contract's
  ORCH_NNODES, ORCH_NODE_RANK, ORCH_MASTER_ADDR and ORCH_MASTER_PORT
  (examples/jobs/torchrun-slurm-conda.yaml);
- as one orchestrate task per GPU (`tasks_per_node: 8`), orchestrate setting those variables
  itself (examples/jobs/pyxis-container.yaml; docs/launch-contract.md).

Rank 0 reports every step (the ranks' mean loss, tokens = global batch x sequence length) and
writes $ORCH_CHECKPOINT_DIR/step-<N>.pt atomically every --ckpt-every steps, when orchestrate
asks for a save (SIGUSR1) and before it stops (SIGTERM, exit 143). Every rank resumes from
orchestrate.resume_path() at the checkpoint's step + 1 (exit 65 if it cannot be loaded).

It imports `orchestrate`: copy the client beside it (cp -r python/orchestrate examples/python/)
or install it (pip install ./python) where the job runs.
"""
import argparse
import os
import sys
import time

import orchestrate  # install the handlers before anything forks (DataLoader workers)

orchestrate.install_signal_handlers()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--ckpt-every", type=int, default=100, help="0: only when asked or stopped")
    p.add_argument("--batch", type=int, default=16, help="sequences per rank and step")
    p.add_argument("--seq-len", type=int, default=256)
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--dim", type=int, default=512)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    return p.parse_args()


class NextToken(torch.nn.Module):
    """An embedding, a few Transformer encoder layers with a causal mask, a projection back."""

    def __init__(self, vocab, dim, layers):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        layer = torch.nn.TransformerEncoderLayer(dim, nhead=8, dim_feedforward=4 * dim,
                                                 batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, layers)
        self.out = torch.nn.Linear(dim, vocab)

    def forward(self, tokens):
        n = tokens.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf"), device=tokens.device), diagonal=1)
        return self.out(self.blocks(self.embed(tokens), mask=mask))


def batch_of(step, rank, args, device):
    """Sequences x[t+1] = (3 x[t] + 7) mod vocab from random starts: learnable, and the same
    for the same step and rank on every attempt, so a resumed run computes what an
    uninterrupted one would."""
    g = torch.Generator().manual_seed(step * 1009 + rank)
    x = torch.empty(args.batch, args.seq_len + 1, dtype=torch.long)
    x[:, 0] = torch.randint(0, args.vocab, (args.batch,), generator=g)
    for t in range(args.seq_len):
        x[:, t + 1] = (3 * x[:, t] + 7) % args.vocab
    x = x.to(device)
    return x[:, :-1], x[:, 1:]


def save(step, model, opt):
    """Rank 0 writes step-<N>.pt in $ORCH_CHECKPOINT_DIR (temp file, fsync, rename) and reports
    it once it is durable; every rank waits for it."""
    if dist.get_rank() == 0:
        started = time.perf_counter()
        path = os.path.join(orchestrate.checkpoint_dir(), "step-%d.pt" % step)
        state = {"step": step, "model": model.module.state_dict(), "opt": opt.state_dict()}
        with orchestrate.atomic_path(path) as tmp:
            torch.save(state, tmp)
        orchestrate.checkpoint(step, path, save_time_s=time.perf_counter() - started)
    dist.barrier()


def resume(model, opt, device):
    """The step to go on after: 0 on a fresh start, else the checkpoint's (loaded on every rank)."""
    path = orchestrate.resume_path()
    if not path:
        return 0
    try:
        state = torch.load(path, map_location=device)
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
    if not orchestrate.checkpoint_dir():
        print("ORCH_CHECKPOINT_DIR is not set: run this under orchestrate", file=sys.stderr)
        return 2
    cuda = torch.cuda.is_available()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl" if cuda else "gloo")  # RANK, WORLD_SIZE, MASTER_ADDR/PORT
    rank, world = dist.get_rank(), dist.get_world_size()
    orchestrate.set_rank(rank)  # the process group's rank decides who reports
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    torch.manual_seed(0)  # the same initial weights on every rank
    model = DistributedDataParallel(NextToken(args.vocab, args.dim, args.layers).to(device),
                                    device_ids=[local_rank] if cuda else None)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    start = resume(model, opt, device)
    tokens = orchestrate.tokens(args.batch * world, args.seq_len)
    for step in range(start + 1, args.steps + 1):
        with orchestrate.step(step, tokens=tokens) as s:
            x, y = batch_of(step, rank, args, device)
            loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
            opt.zero_grad(set_to_none=True)
            loss.backward()  # DDP all-reduces the gradients
            opt.step()
            mean = loss.detach().clone()
            dist.all_reduce(mean)
            s.report(loss=mean.item() / world)
        save_now, stop = orchestrate.requests()  # the same answer on every rank
        if save_now or stop or (args.ckpt_every and step % args.ckpt_every == 0):
            save(step, model, opt)
        if stop:
            if rank == 0:
                print("stopping after step %d: asked to stop" % step, flush=True)
            return 143
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(code)
