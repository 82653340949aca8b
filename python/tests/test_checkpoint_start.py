"""checkpoint_start (issue 43, I/O stalls): the line that says a save begins, before every save
the client wraps: checkpoint_start() itself, atomic_path(path, step=...), the HF callback on a
step the Trainer will save, the Lightning callback's save. A real PyTorch save (Debian's
python3-torch) through atomic_path shows the order a trainer prints."""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import PYTHON_DIR, fresh_integration, lines
from test_hf import Trainer as HfTrainer, TrainingArguments
from test_lightning import Trainer as PlTrainer


def test_checkpoint_start_names_the_step_and_the_absolute_path(orch, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = orch.checkpoint_start(12, "step-12.pt")
    assert line == '@orchestrate {"event":"checkpoint_start","step":12,"path":"%s"}' % (
        tmp_path / "step-12.pt")
    assert lines(capsys.readouterr().out) == [
        {"event": "checkpoint_start", "step": 12, "path": str(tmp_path / "step-12.pt")}]


def test_checkpoint_start_is_rank_zeros_only_and_checks_its_step(orch, capsys, monkeypatch):
    with pytest.raises(ValueError, match="step"):
        orch.checkpoint_start(-1, "/c/x")
    monkeypatch.setenv("ORCH_TASK_RANK", "2")
    assert orch.checkpoint_start(3, "/c/x") is None
    assert capsys.readouterr().out == ""


def test_atomic_path_with_a_step_says_the_save_begins_before_the_file_is_written(orch, capsys,
                                                                                tmp_path):
    target = tmp_path / "step-5.pt"
    with orch.atomic_path(target, step=5) as tmp:
        assert lines(capsys.readouterr().out) == [
            {"event": "checkpoint_start", "step": 5, "path": str(target)}]
        with open(tmp, "w") as f:
            f.write("state")
    assert target.read_text() == "state"
    with orch.atomic_path(tmp_path / "plain.pt") as tmp:  # no step: no line, as before
        open(tmp, "w").close()
    assert capsys.readouterr().out == ""


def test_a_checkpoint_after_its_start_carries_the_save_time_unless_given(orch, capsys, tmp_path):
    target = str(tmp_path / "step-7.pt")
    orch.checkpoint_start(7, target)
    orch.checkpoint(7, target)
    orch.checkpoint_start(8, target + "8")
    orch.checkpoint(8, target + "8", save_time_s=12.5)
    orch.checkpoint(9, target + "9")  # no start: no time
    ckpts = [e for e in lines(capsys.readouterr().out) if e["event"] == "checkpoint"]
    assert ckpts[0]["save_time_s"] >= 0
    assert ckpts[1]["save_time_s"] == 12.5
    assert "save_time_s" not in ckpts[2]


def test_hf_callback_says_checkpoint_start_before_each_save_the_trainer_makes(orch, monkeypatch,
                                                                              tmp_path, capsys):
    for module in fresh_integration("hf", monkeypatch, tmp_path):
        out = str(tmp_path / "hf")
        HfTrainer(TrainingArguments(out, logging_steps=100, save_steps=2),
                  module.OrchestrateCallback()).train(4)
        events = [(e["event"], e.get("step")) for e in lines(capsys.readouterr().out)
                  if e["event"] != "progress"]
        assert events == [("checkpoint_start", 2), ("checkpoint", 2), ("checkpoint_start", 4),
                          ("checkpoint", 4)]


def test_lightning_callback_says_checkpoint_start_before_trainer_save_checkpoint(
        orch, monkeypatch, tmp_path, capsys):
    for module in fresh_integration("lightning", monkeypatch, tmp_path):
        callback = module.OrchestrateCallback(every_n_steps=3)
        PlTrainer(callback).fit(6)
        saves = [e for e in lines(capsys.readouterr().out) if e["event"] != "progress"]
        assert [(e["event"], e["step"]) for e in saves] == [
            ("checkpoint_start", 3), ("checkpoint", 3), ("checkpoint_start", 6), ("checkpoint", 6)]
        assert saves[0]["path"] == saves[1]["path"] == str(tmp_path / "step-3.ckpt")


TORCH_TRAINER = textwrap.dedent("""
    import sys, torch
    sys.path.insert(0, sys.argv[1])
    import orchestrate
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(1, 5):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        orchestrate.progress(step, loss=loss)
        if step % 2 == 0:
            path = "%s/step-%d.pt" % (orchestrate.checkpoint_dir(), step)
            with orchestrate.atomic_path(path, step=step) as tmp:
                torch.save({"model": model.state_dict(), "step": step}, tmp)
            orchestrate.checkpoint(step, path)
""")


def test_a_real_torch_trainer_prints_checkpoint_start_then_checkpoint_for_each_save(tmp_path):
    try:
        import torch  # noqa: F401
    except ImportError:
        pytest.skip("python3-torch is not installed for %s" % sys.executable)
    env = dict(os.environ, ORCH_CHECKPOINT_DIR=str(tmp_path), ORCH_TASK_RANK="0")
    done = subprocess.run([sys.executable, "-c", TORCH_TRAINER, PYTHON_DIR], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    saves = [e for e in lines(done.stdout) if e["event"] != "progress"]
    assert [(e["event"], e["step"]) for e in saves] == [
        ("checkpoint_start", 2), ("checkpoint", 2), ("checkpoint_start", 4), ("checkpoint", 4)]
    assert all(e["path"] == str(tmp_path / ("step-%d.pt" % e["step"])) for e in saves)
    import torch
    assert torch.load(str(tmp_path / "step-4.pt"))["step"] == 4
