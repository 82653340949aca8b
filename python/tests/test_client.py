"""The core client: what progress() and checkpoint() write, on which rank, and that every line
is one JSON object the server's parser (scheduler/model/progress_line.cpp) takes."""
import json
import math
import os

import pytest

from conftest import lines


class Scalar:
    """A one-element tensor as far as the client can tell (it has .item())."""

    def __init__(self, value):
        self.value = value

    def item(self):
        return self.value


def test_progress_writes_one_flushed_line_with_the_fields_given(orch, capsys):
    orch.progress(120, tokens=8192, loss=2.71, step_time_s=0.21)
    out = capsys.readouterr().out
    assert out.endswith("\n") and out.count("\n") == 1
    assert out.startswith("@orchestrate {")
    assert lines(out) == [{"event": "progress", "step": 120, "tokens": 8192, "step_time_s": 0.21,
                           "loss": 2.71}]


def test_only_the_fields_given_are_written(orch, capsys):
    orch.progress(3)
    assert lines(capsys.readouterr().out) == [{"event": "progress", "step": 3}]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_nonfinite_loss_is_null_and_the_line_stays_valid_json(orch, capsys, bad):
    orch.progress(7, loss=bad, grad_norm=bad)
    out = capsys.readouterr().out
    body = out[len("@orchestrate "):]
    parsed = json.loads(body, parse_constant=lambda c: pytest.fail("non-JSON constant " + c))
    assert parsed["loss"] is None
    assert parsed["loss_nonfinite"] == repr(bad)
    assert parsed["grad_norm"] is None


def test_tensor_like_values_are_written_as_numbers(orch, capsys):
    orch.progress(Scalar(5), tokens=Scalar(64), loss=Scalar(0.5), step_time_s=Scalar(0.1),
                  lr=Scalar(1e-4))
    assert lines(capsys.readouterr().out) == [{"event": "progress", "step": 5, "tokens": 64,
                                               "step_time_s": 0.1, "loss": 0.5, "lr": 1e-4}]


def test_extra_metrics_go_as_they_are_and_reserved_names_are_refused(orch, capsys):
    orch.progress(1, lr=0.001, phase="warmup", layers=[1, 2])
    assert lines(capsys.readouterr().out)[0]["phase"] == "warmup"
    for name in ("event", "path"):
        with pytest.raises(ValueError, match=name):
            orch.progress(1, **{name: "x"})
    with pytest.raises(TypeError, match="blob"):
        orch.progress(1, blob=object())


def test_ranks_are_checked_against_the_protocol(orch, capsys):
    orch.progress(2, ranks=[{"rank": 0, "node": "a1", "step_time_s": 0.2}])
    assert lines(capsys.readouterr().out)[0]["ranks"] == [{"rank": 0, "node": "a1", "step_time_s": 0.2}]
    with pytest.raises(ValueError, match=r"ranks\[0\].node"):
        orch.progress(2, ranks=[{"rank": 0, "node": "", "step_time_s": 0.2}])
    with pytest.raises(ValueError, match=r"ranks\[0\].step_time_s"):
        orch.progress(2, ranks=[{"rank": 0, "node": "a", "step_time_s": 0}])


def test_a_step_time_the_server_would_refuse_is_left_out(orch, capsys):
    orch.progress(1, step_time_s=0.0)
    orch.progress(2, step_time_s=float("nan"))
    assert [("step_time_s" in l) for l in lines(capsys.readouterr().out)] == [False, False]


@pytest.mark.parametrize("call,match", [
    (lambda o: o.progress(-1), "step"),
    (lambda o: o.progress(1.5), "step"),
    (lambda o: o.progress(True), "step"),
    (lambda o: o.progress(1, tokens=-3), "tokens"),
    (lambda o: o.progress(1, loss="low"), "loss"),
    (lambda o: o.tokens(0.5, 128), "global_batch"),
    (lambda o: o.checkpoint(1, "/c/x", tier="nvme"), "tier"),
])
def test_bad_values_are_errors_naming_the_field(orch, call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call(orch)


def test_tokens_is_global_batch_times_sequence_length(orch):
    assert orch.tokens(32, 2048) == 65536


@pytest.mark.parametrize("env,reports", [
    ({}, True),
    ({"ORCH_TASK_RANK": "0", "RANK": "0"}, True),
    ({"ORCH_TASK_RANK": "1", "RANK": "1"}, False),
    ({"RANK": "2"}, False),
    ({"RANK": "0"}, True),
    # torchrun inside a task (tasks_per_node: 1) renumbers its processes: RANK is the global one
    ({"ORCH_TASK_RANK": "0", "RANK": "3"}, False),
    ({"ORCH_TASK_RANK": "1", "RANK": "0"}, True),
])
def test_only_global_rank_zero_reports(orch, capsys, monkeypatch, env, reports):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    line = orch.progress(1, loss=1.0)
    ckpt = orch.checkpoint(1, "/ckpt/job-1/step-1.pt")
    assert (line is not None, ckpt is not None) == (reports, reports)
    assert len(lines(capsys.readouterr().out)) == (2 if reports else 0)


def test_set_rank_overrides_the_environment(orch, capsys, monkeypatch):
    monkeypatch.setenv("ORCH_TASK_RANK", "0")
    orch.set_rank(1)
    assert orch.progress(1) is None
    orch.set_rank(None)
    assert orch.progress(1) is not None
    with pytest.raises(ValueError):
        orch.set_rank(-1)


def test_a_bad_rank_variable_is_an_error_naming_it(orch, monkeypatch):
    monkeypatch.setenv("ORCH_TASK_RANK", "zero")
    with pytest.raises(ValueError, match="ORCH_TASK_RANK"):
        orch.progress(1)


def test_world_size_follows_the_launch_contract(orch, monkeypatch):
    assert orch.world_size() == 1
    monkeypatch.setenv("ORCH_NTASKS", "4")
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert orch.world_size() == 4


def test_checkpoint_lines_name_an_absolute_normal_path(orch, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("ORCH_CHECKPOINT_DIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    orch.checkpoint(10, "run/./step-10.pt", save_time_s=1.5)
    captured = capsys.readouterr()
    assert lines(captured.out) == [{"event": "checkpoint", "step": 10,
                                    "path": str(tmp_path / "run" / "step-10.pt"), "save_time_s": 1.5}]
    assert captured.err == ""


def test_a_checkpoint_outside_the_directory_is_written_but_warned_about(orch, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("ORCH_CHECKPOINT_DIR", str(tmp_path / "job-1"))
    orch.checkpoint(10, str(tmp_path / "job-2" / "step-10.pt"))
    captured = capsys.readouterr()
    assert len(lines(captured.out)) == 1
    assert "not inside" in captured.err and "job-1" in captured.err


def test_a_local_checkpoint_names_its_node(orch, capsys, monkeypatch):
    monkeypatch.setenv("ORCH_NODE_NAME", "gpu-a1")
    orch.checkpoint(120, "/local/job-7/step-120.pt", tier="local", save_time_s=1.8)
    assert lines(capsys.readouterr().out) == [{"event": "checkpoint", "step": 120,
                                               "path": "/local/job-7/step-120.pt",
                                               "save_time_s": 1.8, "tier": "local", "node": "gpu-a1"}]
    monkeypatch.delenv("ORCH_NODE_NAME")
    with pytest.raises(ValueError, match="ORCH_NODE_NAME"):
        orch.checkpoint(120, "/local/job-7/step-120.pt", tier="local")
    with pytest.raises(ValueError, match="local"):
        orch.checkpoint(120, "/ckpt/step-120.pt", node="gpu-a1")


def test_resume_path_reads_orch_resume_from_or_the_named_variable(orch, monkeypatch):
    assert orch.resume_path() is None
    monkeypatch.setenv("ORCH_RESUME_FROM", "")
    assert orch.resume_path() is None
    monkeypatch.setenv("ORCH_RESUME_FROM", "/ckpt/job-1/step-40.pt")
    assert orch.resume_path() == "/ckpt/job-1/step-40.pt"
    monkeypatch.setenv("MY_RESUME", "/ckpt/job-1/step-50.pt")
    assert orch.resume_path("MY_RESUME") == "/ckpt/job-1/step-50.pt"


def test_step_times_the_block_and_reports_when_it_ends(orch, capsys):
    with orch.step(4, tokens=64) as s:
        s.report(loss=0.25)
        assert capsys.readouterr().out == ""
    [line] = lines(capsys.readouterr().out)
    assert line["step"] == 4 and line["tokens"] == 64 and line["loss"] == 0.25
    assert line["step_time_s"] > 0 and line["step_time_s"] == s.step_time_s


def test_a_step_that_raises_is_not_reported(orch, capsys):
    with pytest.raises(RuntimeError):
        with orch.step(5):
            raise RuntimeError("out of memory")
    assert capsys.readouterr().out == ""


def test_step_timer_times_from_one_report_to_the_next(orch, capsys):
    timer = orch.StepTimer()
    timer.progress(1, loss=1.0)
    timer.progress(2, loss=0.5)
    got = lines(capsys.readouterr().out)
    assert [l["step"] for l in got] == [1, 2]
    assert all(l["step_time_s"] > 0 for l in got)


def test_atomic_path_renames_into_place_only_on_success(orch, tmp_path):
    target = tmp_path / "step-1.pt"
    with orch.atomic_path(target) as tmp:
        with open(tmp, "w") as f:
            f.write("state")
        assert not target.exists()
    assert target.read_text() == "state"
    with pytest.raises(OSError):
        with orch.atomic_path(target) as tmp:
            with open(tmp, "w") as f:
                f.write("half")
            raise OSError("disk full")
    assert target.read_text() == "state"
    assert sorted(os.listdir(tmp_path)) == ["step-1.pt"]


def test_lines_from_threads_are_never_interleaved(orch, capsys):
    import threading
    threads = [threading.Thread(target=lambda i=i: [orch.progress(i * 1000 + k, note="x" * 200)
                                                  for k in range(50)]) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(lines(capsys.readouterr().out)) == 200


def test_every_number_the_client_writes_is_finite(orch, capsys):
    orch.progress(1, loss=1e308 * 10, tokens=1, step_time_s=math.inf, a={"b": [math.nan]})
    [line] = lines(capsys.readouterr().out)
    assert line["loss"] is None and "step_time_s" not in line and line["a"] == {"b": [None]}
