#!/usr/bin/env python3
"""A Hugging Face transformers Trainer job with the orchestrate callback
(python/orchestrate/integrations/hf.py, docs/progress-protocol.md "Hugging Face transformers").

It trains a small GPT-2, built from a config (nothing is downloaded), on synthetic sequences:
x[t+1] = (3 x[t] + 7) mod vocab from a start drawn per example. Start it under torchrun (one per
node, examples/jobs/hf-trainer-kubernetes.yaml) or as a single process.

- The Trainer writes output_dir/checkpoint-<step> under $ORCH_CHECKPOINT_DIR every --save-steps
  steps; OrchestrateCallback reports each step (with the logged loss) and each save, and saves
  when orchestrate asks (SIGUSR1) or before it stops the job (SIGTERM, then exit 143).
- On a restart, trainer.train(resume_from_checkpoint=...) gets the checkpoint orchestrate chose
  (its newest verified copy at this site), and the step numbering goes on.
- orchestrate prunes old checkpoints itself (checkpoint.replicate.keep), so save_total_limit
  stays unset: the Trainer must not delete a checkpoint orchestrate may resume from.

It imports `orchestrate` (the package, for its integrations): copy it beside this file
(cp -r python/orchestrate examples/python/) or install it (pip install ./python).
"""
import argparse
import os
import sys

import orchestrate  # install the handlers before the DataLoader forks its workers

orchestrate.install_signal_handlers()

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments  # noqa: E402

from orchestrate.integrations.hf import OrchestrateCallback, resume_from_checkpoint  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--save-steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=8, help="sequences per GPU (process) and step")
    p.add_argument("--seq-len", type=int, default=512)
    p.add_argument("--vocab", type=int, default=4096)
    p.add_argument("--lr", type=float, default=3e-4)
    return p.parse_args()


class Sequences(torch.utils.data.Dataset):
    """Example i is the same on every attempt: its start token is drawn from a seed of i."""

    def __init__(self, count, seq_len, vocab):
        self.count, self.seq_len, self.vocab = count, seq_len, vocab

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.empty(self.seq_len, dtype=torch.long)
        x[0] = torch.randint(0, self.vocab, (1,), generator=g)
        for t in range(self.seq_len - 1):
            x[t + 1] = (3 * x[t] + 7) % self.vocab
        return {"input_ids": x, "labels": x.clone()}


def main():
    args = parse_args()
    if not orchestrate.checkpoint_dir():
        print("ORCH_CHECKPOINT_DIR is not set: run this under orchestrate", file=sys.stderr)
        return 2
    config = GPT2Config(vocab_size=args.vocab, n_positions=args.seq_len, n_embd=768, n_layer=12,
                        n_head=12)
    model = GPT2LMHeadModel(config)
    world = orchestrate.world_size()  # torchrun's WORLD_SIZE: every process on every node
    bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    training = TrainingArguments(
        output_dir=os.path.join(orchestrate.checkpoint_dir(), "hf"),  # inside $ORCH_CHECKPOINT_DIR
        max_steps=args.steps,
        per_device_train_batch_size=args.batch,
        learning_rate=args.lr,
        logging_steps=10,
        save_steps=args.save_steps,
        bf16=bf16,
        dataloader_num_workers=2,
        report_to=[],
    )
    callback = OrchestrateCallback(tokens_per_step=orchestrate.tokens(args.batch * world,
                                                                      args.seq_len))
    data = Sequences(args.steps * args.batch * world, args.seq_len, args.vocab)
    trainer = Trainer(model=model, args=training, train_dataset=data, callbacks=[callback])
    trainer.train(resume_from_checkpoint=resume_from_checkpoint())
    if orchestrate.stop_requested():
        return 143
    return 0


if __name__ == "__main__":
    sys.exit(main())
