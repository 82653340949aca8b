"""OrchestrateCallback for Lightning, driven as Lightning's fit loop calls a Callback
(on_train_start(trainer, pl_module), on_train_batch_end(trainer, pl_module, outputs, batch,
batch_idx) after each batch, on_save_checkpoint(trainer, pl_module, checkpoint) while
trainer.save_checkpoint builds the file) with stub Trainer and LightningModule objects
(Lightning is not packaged in Debian)."""
import importlib
import os
import pickle
import signal
import sys
import types

import pytest

from conftest import fresh_integration, lines


class Strategy:
    def __init__(self, others=False):
        self.others = others  # what the other ranks decided
        self.asked = []

    def reduce_boolean_decision(self, decision, all=True):
        self.asked.append((decision, all))
        return decision or self.others


class LightningModule:
    pass


class Trainer:
    def __init__(self, callback, accumulate=1, global_rank=0, strategy=None, on_batch=None):
        self.callback, self.accumulate, self.on_batch = callback, accumulate, on_batch
        self.global_rank = global_rank
        self.is_global_zero = global_rank == 0
        self.strategy = strategy or Strategy()
        self.global_step = 0
        self.should_stop = False
        self.saved = []

    def save_checkpoint(self, filepath):
        checkpoint = {"global_step": self.global_step}
        self.callback.on_save_checkpoint(self, LightningModule(), checkpoint)
        self.saved.append(filepath)
        if self.is_global_zero:
            with open(filepath, "wb") as f:
                pickle.dump(checkpoint, f)

    def fit(self, batches, ckpt_path=None):
        if ckpt_path:
            with open(ckpt_path, "rb") as f:
                self.global_step = pickle.load(f)["global_step"]
        module = LightningModule()
        self.callback.on_train_start(self, module)
        for batch_idx in range(batches):
            if self.should_stop:
                break
            if (batch_idx + 1) % self.accumulate == 0:
                self.global_step += 1
            if self.on_batch:
                self.on_batch(self.global_step)
            loss = Loss(1.0 / (batch_idx + 1))
            self.callback.on_train_batch_end(self, module, {"loss": loss}, None, batch_idx)


class Loss:
    """A scalar tensor as Lightning hands it over (.detach(), .item())."""

    def __init__(self, value):
        self.value = value

    def detach(self):
        return self

    def item(self):
        return self.value


@pytest.fixture
def pl(orch, monkeypatch, tmp_path):
    yield from fresh_integration("lightning", monkeypatch, tmp_path)


def test_importing_it_without_lightning_works_on_a_plain_base(pl):
    assert pl.OrchestrateCallback.__mro__[1] is object


@pytest.mark.parametrize("package", ["lightning.pytorch", "pytorch_lightning"])
def test_it_subclasses_lightnings_callback_when_lightning_is_there(orch, monkeypatch, package):
    class Callback:
        pass

    module = types.ModuleType(package)
    module.Callback = Callback
    monkeypatch.setitem(sys.modules, package, module)
    if package == "lightning.pytorch":
        parent = types.ModuleType("lightning")
        parent.pytorch = module
        monkeypatch.setitem(sys.modules, "lightning", parent)
    import orchestrate.integrations.lightning as lightning
    importlib.reload(lightning)
    try:
        assert issubclass(lightning.OrchestrateCallback, Callback)
    finally:
        monkeypatch.undo()
        importlib.reload(lightning)


def test_each_optimizer_step_is_reported_with_its_loss(pl, capsys):
    trainer = Trainer(pl.OrchestrateCallback(tokens_per_step=512), accumulate=2)
    trainer.fit(6)
    got = lines(capsys.readouterr().out)
    assert [l["step"] for l in got] == [1, 2, 3]
    assert [l["loss"] for l in got] == [0.5, 0.25, 1.0 / 6]
    assert all(l["tokens"] == 512 and l["step_time_s"] > 0 for l in got)


def test_saves_every_n_steps_into_the_checkpoint_directory(pl, tmp_path, capsys):
    trainer = Trainer(pl.OrchestrateCallback(every_n_steps=2))
    trainer.fit(5)
    ckpts = [l for l in lines(capsys.readouterr().out) if l["event"] == "checkpoint"]
    assert [(c["step"], c["path"]) for c in ckpts] == [(2, str(tmp_path / "step-2.ckpt")),
                                                     (4, str(tmp_path / "step-4.ckpt"))]
    assert sorted(os.listdir(tmp_path)) == ["step-2.ckpt", "step-4.ckpt"]
    with open(tmp_path / "step-4.ckpt", "rb") as f:
        assert pickle.load(f)["orchestrate"] == {"step": 4}


def test_a_save_request_on_any_rank_saves_on_every_rank_and_training_goes_on(pl, tmp_path, capsys):
    strategy = Strategy()
    cb = pl.OrchestrateCallback()
    trainer = Trainer(cb, strategy=strategy,
                      on_batch=lambda s: s == 3 and os.kill(os.getpid(), signal.SIGUSR1))
    trainer.fit(6)
    out = capsys.readouterr().out
    assert [c["step"] for c in lines(out) if c["event"] == "checkpoint"] == [3]
    assert "saved on request at step 3" in out
    assert cb.saves_requested == [3]
    assert trainer.global_step == 6
    assert (True, False) in strategy.asked  # asked the other ranks (any of them)
    # Another rank was asked: this one saves too (the save is collective) but does not report.
    other = Trainer(pl.OrchestrateCallback(), global_rank=1, strategy=Strategy(others=True))
    other.fit(1)
    assert other.saved == [str(tmp_path / "step-1.ckpt.tmp")]
    assert lines(capsys.readouterr().out) == []


def test_a_stop_saves_and_stops_the_trainer(pl, capsys):
    trainer = Trainer(pl.OrchestrateCallback(),
                      on_batch=lambda s: s == 2 and os.kill(os.getpid(), signal.SIGTERM))
    trainer.fit(10)
    assert [c["step"] for c in lines(capsys.readouterr().out) if c["event"] == "checkpoint"] == [2]
    assert trainer.should_stop and trainer.global_step == 2


def test_resume_through_ckpt_path_continues_the_step_numbering(pl, tmp_path, capsys, monkeypatch):
    first = Trainer(pl.OrchestrateCallback(every_n_steps=5))
    first.fit(5)
    capsys.readouterr()
    monkeypatch.setenv("ORCH_RESUME_FROM", str(tmp_path / "step-5.ckpt"))
    second = Trainer(pl.OrchestrateCallback())
    second.fit(3, ckpt_path=pl.ckpt_path())
    assert [l["step"] for l in lines(capsys.readouterr().out)] == [6, 7, 8]
