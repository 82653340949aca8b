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

The synthetic sequences, the checkpoint's save and load are train_ddp.py's. Rank 0 reports
every step (the ranks' mean loss, tokens = global batch x sequence length) and writes
$ORCH_CHECKPOINT_DIR/step-<N>.pt atomically every --ckpt-every steps, when orchestrate
asks for a save (SIGUSR1) and before it stops (SIGTERM, exit 143). Every rank resumes from
orchestrate.resume_path() at the checkpoint's step + 1 (exit 65 if it cannot be loaded).

It imports `orchestrate`: copy the client beside it (cp -r python/orchestrate examples/python/)
or install it (pip install ./python) where the job runs.
"""
import argparse
import os
import sys

import orchestrate
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

# The data, the save, the resume and the exit are train_ddp.py's, shipped beside this file
# (importing it installs the client's signal handlers).
from train_ddp import batch_of, leave, resume, save

FLAGS = (  # flag, type, default, help
    ("--steps", int, 1000, "total steps"),
    ("--ckpt-every", int, 100, "save every N steps; 0: only when asked or stopped"),
    ("--batch", int, 16, "sequences per rank and step"),
    ("--seq-len", int, 256, "tokens per sequence"),
    ("--vocab", int, 1024, "vocabulary size"),
    ("--dim", int, 512, "model width"),
    ("--layers", int, 4, "Transformer layers"),
    ("--lr", float, 3e-4, "AdamW learning rate"),
)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for flag, kind, default, text in FLAGS:
        p.add_argument(flag, type=kind, default=default, help=text)
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
    start = resume(model, opt)  # loaded on the CPU; load_state_dict moves it to the device
    tokens = orchestrate.tokens(args.batch * world, args.seq_len)
    for step in range(start + 1, args.steps + 1):
        with orchestrate.step(step, tokens=tokens) as s:
            x, y = (t.to(device) for t in batch_of(step, rank, args))
            loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
            opt.zero_grad(set_to_none=True)
            loss.backward()  # DDP all-reduces the gradients
            opt.step()
            mean = loss.detach().clone()
            dist.all_reduce(mean)
            s.report(loss=mean.item() / world)
        save_now, stop = orchestrate.requests()  # the same answer on every rank
        if save_now or stop or (args.ckpt_every and step % args.ckpt_every == 0):
            save(step, model, opt, rank)  # rank 0 writes and reports it
            dist.barrier()
        if stop:
            if rank == 0:
                print("stopping after step %d: asked to stop" % step, flush=True)
            return 143
    dist.barrier()  # every rank is done
    return 0


if __name__ == "__main__":
    leave(main())  # flushes and exits without tearing the process group down (train_ddp.py)
