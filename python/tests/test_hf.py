"""OrchestrateCallback for transformers' Trainer, driven the way Trainer drives its callbacks
(transformers' trainer_callback.py: on_train_begin, then per optimizer step on_step_end, on_log
when control.should_log, on_save after a save when control.should_save), with stub
TrainingArguments, TrainerState and TrainerControl (transformers is not packaged in Debian)."""
import importlib
import os
import signal
import sys
import types

import pytest

from conftest import fresh_integration, lines


class TrainingArguments:
    def __init__(self, output_dir, logging_steps=1, save_steps=0, process_index=0):
        self.output_dir = output_dir
        self.logging_steps = logging_steps
        self.save_steps = save_steps
        self.process_index = process_index


class TrainerState:
    def __init__(self):
        self.global_step = 0
        self.is_world_process_zero = True


class TrainerControl:
    def __init__(self):
        self.should_training_stop = False
        self.should_save = False
        self.should_log = False


class Trainer:
    """The part of transformers' Trainer loop that calls callbacks: DefaultFlowCallback's flags
    first, then ours (a returned control replaces the Trainer's, as CallbackHandler does)."""

    def __init__(self, args, callback, on_step=None):
        self.args, self.callback, self.on_step = args, callback, on_step
        self.state, self.control = TrainerState(), TrainerControl()

    def call(self, event, **kwargs):
        result = getattr(self.callback, event)(self.args, self.state, self.control, **kwargs)
        if result is not None:
            self.control = result

    def train(self, steps, resume_from_checkpoint=None):
        if resume_from_checkpoint:
            self.state.global_step = int(resume_from_checkpoint.rsplit("-", 1)[1])
        self.call("on_train_begin")
        while self.state.global_step < steps and not self.control.should_training_stop:
            self.state.global_step += 1
            if self.on_step:
                self.on_step(self.state.global_step)
            step = self.state.global_step
            self.control.should_log = step % self.args.logging_steps == 0
            self.control.should_save = bool(self.args.save_steps) and step % self.args.save_steps == 0
            self.call("on_step_end")
            if self.control.should_log:
                self.call("on_log", logs={"loss": 1.0 / step, "learning_rate": 5e-5, "epoch": 0.1})
                self.control.should_log = False
            if self.control.should_save:
                os.makedirs(os.path.join(self.args.output_dir, "checkpoint-%d" % step))
                self.call("on_save")
                self.control.should_save = False
        self.call("on_train_end")


@pytest.fixture
def hf(orch, monkeypatch, tmp_path):
    yield from fresh_integration("hf", monkeypatch, tmp_path)


def test_importing_it_without_transformers_works_on_a_plain_base(hf):
    assert "transformers" not in sys.modules or hasattr(sys.modules["transformers"], "__stub__")
    assert hf.OrchestrateCallback.__mro__[1] is object


def test_it_subclasses_trainer_callback_when_transformers_is_there(orch, monkeypatch):
    stub = types.ModuleType("transformers")
    stub.__stub__ = True

    class TrainerCallback:
        pass

    stub.TrainerCallback = TrainerCallback
    monkeypatch.setitem(sys.modules, "transformers", stub)
    import orchestrate.integrations.hf as module
    importlib.reload(module)
    try:
        assert issubclass(module.OrchestrateCallback, TrainerCallback)
    finally:
        monkeypatch.delitem(sys.modules, "transformers")
        importlib.reload(module)


def test_every_step_is_reported_with_its_time_tokens_and_logged_loss(hf, tmp_path, capsys):
    trainer = Trainer(TrainingArguments(str(tmp_path / "out"), logging_steps=2),
                      hf.OrchestrateCallback(tokens_per_step=4096))
    trainer.train(5)
    got = lines(capsys.readouterr().out)
    assert [l["step"] for l in got] == [1, 2, 3, 4, 5]
    assert all(l["tokens"] == 4096 and l["step_time_s"] > 0 for l in got)
    assert [l.get("loss") for l in got] == [None, 0.5, None, 0.25, None]
    assert got[1]["learning_rate"] == 5e-5


def test_saves_are_reported_with_the_checkpoint_directory(hf, tmp_path, capsys):
    out = tmp_path / "out"
    trainer = Trainer(TrainingArguments(str(out), save_steps=3), hf.OrchestrateCallback())
    trainer.train(6)
    ckpts = [l for l in lines(capsys.readouterr().out) if l["event"] == "checkpoint"]
    assert [(c["step"], c["path"]) for c in ckpts] == [(3, str(out / "checkpoint-3")),
                                                     (6, str(out / "checkpoint-6"))]


def test_a_save_request_makes_the_trainer_save_and_go_on(hf, tmp_path, capsys):
    cb = hf.OrchestrateCallback()
    trainer = Trainer(TrainingArguments(str(tmp_path / "out")), cb,
                      on_step=lambda s: s == 4 and os.kill(os.getpid(), signal.SIGUSR1))
    trainer.train(8)
    out = capsys.readouterr().out
    ckpts = [l for l in lines(out) if l["event"] == "checkpoint"]
    assert [c["step"] for c in ckpts] == [4]
    assert cb.saves_requested == [4]
    assert "saved on request at step 4" in out
    assert trainer.state.global_step == 8


def test_a_stop_saves_and_ends_training(hf, tmp_path, capsys):
    trainer = Trainer(TrainingArguments(str(tmp_path / "out")), hf.OrchestrateCallback(),
                      on_step=lambda s: s == 3 and os.kill(os.getpid(), signal.SIGTERM))
    trainer.train(10)
    ckpts = [l for l in lines(capsys.readouterr().out) if l["event"] == "checkpoint"]
    assert [c["step"] for c in ckpts] == [3]
    assert trainer.state.global_step == 3
    assert hf.orchestrate.stop_requested()


def test_resume_continues_the_step_numbering(hf, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ORCH_RESUME_FROM", str(tmp_path / "out" / "checkpoint-40"))
    trainer = Trainer(TrainingArguments(str(tmp_path / "out")), hf.OrchestrateCallback())
    trainer.train(43, resume_from_checkpoint=hf.resume_from_checkpoint())
    assert [l["step"] for l in lines(capsys.readouterr().out)] == [41, 42, 43]
    monkeypatch.delenv("ORCH_RESUME_FROM")
    assert hf.resume_from_checkpoint() is None


def test_only_the_trainers_process_zero_reports(hf, tmp_path, capsys):
    trainer = Trainer(TrainingArguments(str(tmp_path / "out"), save_steps=1, process_index=1),
                      hf.OrchestrateCallback())
    trainer.train(2)
    assert lines(capsys.readouterr().out) == []


def test_an_output_dir_outside_the_checkpoint_directory_is_named(hf, tmp_path, capsys):
    Trainer(TrainingArguments("/tmp/elsewhere"), hf.OrchestrateCallback()).train(1)
    assert "output_dir /tmp/elsewhere is not inside $ORCH_CHECKPOINT_DIR" in capsys.readouterr().err
