"""orchestrate for Lightning's Trainer (lightning.pytorch, or the older pytorch_lightning).

    import orchestrate
    from orchestrate.integrations.lightning import OrchestrateCallback, ckpt_path

    trainer = L.Trainer(callbacks=[OrchestrateCallback(tokens_per_step=t, every_n_steps=200)])
    trainer.fit(model, data, ckpt_path=ckpt_path())
    if orchestrate.stop_requested():
        sys.exit(143)

What it does (Lightning's Callback hooks):
- on_train_batch_end: after each optimizer step (trainer.global_step moved), a progress line
  with the step's wall time, tokens_per_step and the loss from the step's outputs.
- Every every_n_steps steps, and when orchestrate asks for a save (SIGUSR1) or a stop
  (SIGTERM) on any rank (agreed through trainer.strategy.reduce_boolean_decision), it calls
  trainer.save_checkpoint on every rank into $ORCH_CHECKPOINT_DIR/step-<global_step>.ckpt
  (written as a temporary file, renamed by global rank 0), after the checkpoint_start line of
  that path, and reports it. A stop then sets
  trainer.should_stop.
- on_save_checkpoint: records the step in the checkpoint (checkpoint["orchestrate"]).
- ckpt_path(): the checkpoint to resume from for trainer.fit(ckpt_path=...), None on a fresh
  start; Lightning restores global_step from it, so the step numbering goes on.
"""

import os
import sys
import time

import orchestrate


def _base():
    # The package the program uses: pytorch_lightning when only it was imported, else lightning.
    names = ("pytorch_lightning", "lightning.pytorch")
    if "pytorch_lightning" not in sys.modules or "lightning" in sys.modules:
        names = ("lightning.pytorch", "pytorch_lightning")
    for name in names:
        try:
            module = __import__(name, fromlist=["Callback"])
            return module.Callback
        except ImportError:
            continue
    return object


_Base = _base()

__all__ = ["OrchestrateCallback", "ckpt_path"]


def ckpt_path(env=None):
    """orchestrate.resume_path(): pass it to trainer.fit(..., ckpt_path=...)."""
    return orchestrate.resume_path(env)


def _commit(tmp, path):
    """fsync tmp (a file, or a directory's files), rename it to path, fsync the directory."""
    files = [tmp] if os.path.isfile(tmp) else [os.path.join(d, f) for d, _, fs in os.walk(tmp) for f in fs]
    for name in files:
        with open(name, "rb") as f:
            os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _loss_of(outputs):
    if isinstance(outputs, dict):
        outputs = outputs.get("loss")
    if outputs is None:
        return None
    if hasattr(outputs, "detach"):
        outputs = outputs.detach()
    try:
        return float(outputs.item() if hasattr(outputs, "item") else outputs)
    except (TypeError, ValueError, RuntimeError):
        return None


class OrchestrateCallback(_Base):
    """tokens_per_step: tokens one optimizer step processes in the whole job; every_n_steps:
    save that often (0: only when orchestrate asks); dirpath: where saves go (default
    $ORCH_CHECKPOINT_DIR; it must lie inside it)."""

    def __init__(self, tokens_per_step=None, every_n_steps=0, dirpath=None):
        self.tokens_per_step = tokens_per_step
        self.every_n_steps = every_n_steps
        self.dirpath = dirpath
        self.saves_requested = []  # steps at which a save orchestrate asked for was made
        self._last = None
        self._last_step = None

    def on_train_start(self, trainer, pl_module):
        rank = getattr(trainer, "global_rank", None)
        if isinstance(rank, int):
            orchestrate.set_rank(rank)  # Lightning knows the rank of the processes it started
        orchestrate.install_signal_handlers()
        self._last = time.perf_counter()
        self._last_step = trainer.global_step

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        step = trainer.global_step
        if step == self._last_step:
            return  # gradient accumulation: no optimizer step yet
        now = time.perf_counter()
        elapsed, self._last, self._last_step = now - (self._last or now), now, step
        orchestrate.progress(step, tokens=self.tokens_per_step, loss=_loss_of(outputs),
                             step_time_s=elapsed)
        save, stop = self._requests(trainer)
        if save or stop or (self.every_n_steps and step % self.every_n_steps == 0):
            self.save(trainer, step)
            if save or stop:
                self.saves_requested.append(step)
                if orchestrate.is_rank_zero():
                    print("orchestrate: saved on request at step %d" % step, flush=True)
        if stop:
            trainer.should_stop = True
        self._last = time.perf_counter()  # the save is not the next step's time

    def on_save_checkpoint(self, trainer, pl_module, checkpoint):
        checkpoint["orchestrate"] = {"step": trainer.global_step}

    def save(self, trainer, step):
        """trainer.save_checkpoint on every rank, renamed into place and reported by rank 0."""
        directory = self.dirpath or orchestrate.checkpoint_dir()
        if not directory:
            sys.stderr.write("orchestrate: no $ORCH_CHECKPOINT_DIR and no dirpath: not saving\n")
            return None
        path = os.path.join(directory, "step-%d.ckpt" % step)
        started = time.perf_counter()
        orchestrate.checkpoint_start(step, path)  # global rank 0 only, as every line
        tmp = path + ".tmp"
        trainer.save_checkpoint(tmp)  # collective: every rank calls it, global rank 0 writes
        if not orchestrate.is_rank_zero():
            return None
        _commit(tmp, path)
        orchestrate.checkpoint(step, path, save_time_s=time.perf_counter() - started)
        return path

    @staticmethod
    def _requests(trainer):
        save, stop = orchestrate.save_requested(), orchestrate.stop_requested()
        strategy = getattr(trainer, "strategy", None)
        agree = getattr(strategy, "reduce_boolean_decision", None)
        if agree is not None:  # the same answer on every rank: the save is collective
            save = bool(agree(save, all=False))
            stop = bool(agree(stop, all=False))
        return save, stop
