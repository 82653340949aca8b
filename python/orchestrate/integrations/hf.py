"""orchestrate for the Hugging Face transformers Trainer.

    import orchestrate
    from orchestrate.integrations.hf import OrchestrateCallback, resume_from_checkpoint

    args = TrainingArguments(output_dir=orchestrate.checkpoint_dir() + "/hf", save_steps=200, ...)
    trainer = Trainer(model=model, args=args, ..., callbacks=[OrchestrateCallback(tokens_per_step=t)])
    trainer.train(resume_from_checkpoint=resume_from_checkpoint())
    if orchestrate.stop_requested():
        sys.exit(143)

What it does (transformers' TrainerCallback events):
- on_step_end: a progress line for state.global_step with its wall time and tokens_per_step;
  on a step the Trainer logs, the line waits for on_log and carries its `loss` (and
  `learning_rate`, `grad_norm`). When orchestrate asked for a save (SIGUSR1) or a stop (SIGTERM)
  on any rank, it sets control.should_save (and control.should_training_stop for a stop). On a
  step the Trainer will save (control.should_save), the checkpoint_start line of
  output_dir/checkpoint-<global_step> (the Trainer saves right after on_step_end).
- on_save: the checkpoint line for args.output_dir/checkpoint-<global_step>, which must lie
  inside $ORCH_CHECKPOINT_DIR (put output_dir there).
- resume_from_checkpoint(): the path to pass to trainer.train(), None on a fresh start.
"""

import os
import sys
import time

import orchestrate

try:  # subclass the framework's base when it is there, so the Trainer accepts the callback
    from transformers import TrainerCallback as _Base
except ImportError:
    _Base = object

__all__ = ["OrchestrateCallback", "resume_from_checkpoint"]

_LOGGED = ("learning_rate", "grad_norm")


def resume_from_checkpoint(env=None):
    """The checkpoint directory orchestrate resumes the job from (orchestrate.resume_path()), or
    None on a fresh start: pass it to trainer.train(resume_from_checkpoint=...)."""
    return orchestrate.resume_path(env)


class OrchestrateCallback(_Base):
    """Reports progress and checkpoints of a transformers Trainer to orchestrate and saves when
    orchestrate asks. tokens_per_step: tokens one optimizer step processes in the whole job
    (orchestrate.tokens(global_batch, seq_len)); None leaves `tokens` out (no MFU)."""

    def __init__(self, tokens_per_step=None):
        self.tokens_per_step = tokens_per_step
        self.saves_requested = []  # steps at which a save orchestrate asked for was made
        self._last = None
        self._pending = None
        self._save_started = None
        self._requested = False

    def on_train_begin(self, args, state, control, **kwargs):
        rank = getattr(args, "process_index", None)
        if isinstance(rank, int):
            orchestrate.set_rank(rank)  # the Trainer's own global rank
        orchestrate.install_signal_handlers()
        self._last = time.perf_counter()
        where = orchestrate.checkpoint_dir()
        out = os.path.normpath(os.path.abspath(args.output_dir))
        if where and not (out + "/").startswith(os.path.normpath(where) + "/"):
            sys.stderr.write("orchestrate: output_dir %s is not inside $ORCH_CHECKPOINT_DIR %s: "
                             "orchestrate cannot register or resume its checkpoints\n" % (out, where))
        return control

    def on_step_end(self, args, state, control, **kwargs):
        now = time.perf_counter()
        elapsed, self._last = now - (self._last or now), now
        self._flush()
        fields = {"step_time_s": elapsed}
        if self.tokens_per_step is not None:
            fields["tokens"] = self.tokens_per_step
        save, stop = orchestrate.requests()
        if save or stop:
            control.should_save = True
            self._requested = True
        if stop:
            control.should_training_stop = True
        if getattr(control, "should_save", False):
            self._save_started = now
            path = os.path.join(args.output_dir, "checkpoint-%d" % state.global_step)
            orchestrate.checkpoint_start(state.global_step, path)
        if getattr(control, "should_log", False):
            self._pending = (state.global_step, fields)  # on_log brings the loss
        else:
            orchestrate.progress(state.global_step, **fields)
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self._pending is None or self._pending[0] != state.global_step:
            return control
        step, fields = self._pending
        self._pending = None
        logs = logs or {}
        if isinstance(logs.get("loss"), (int, float)):
            fields["loss"] = logs["loss"]
        for key in _LOGGED:
            if isinstance(logs.get(key), (int, float)):
                fields[key] = logs[key]
        orchestrate.progress(step, **fields)
        return control

    def on_save(self, args, state, control, **kwargs):
        step = state.global_step
        path = os.path.join(args.output_dir, "checkpoint-%d" % step)
        took = time.perf_counter() - self._save_started if self._save_started else None
        self._save_started = None
        if self._requested:
            self._requested = False
            self.saves_requested.append(step)
            if orchestrate.is_rank_zero():
                print("orchestrate: saved on request at step %d" % step, flush=True)
        if orchestrate.is_rank_zero() and os.path.exists(path):
            orchestrate.checkpoint(step, path, save_time_s=took)
        return control

    def on_train_end(self, args, state, control, **kwargs):
        self._flush()
        return control

    def _flush(self):
        if self._pending is not None:  # a logged step whose on_log never came
            step, fields = self._pending
            self._pending = None
            orchestrate.progress(step, **fields)
