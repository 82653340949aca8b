"""save_requested() and stop_requested() in a real process that gets SIGUSR1 and SIGTERM as the
agent sends them (to the task's whole process group), with a forked worker in the group."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import PYTHON_DIR, lines

# Reports a step every 20 ms; says "saved on request at step N" when asked to save, and on a
# stop saves and exits 143. With --fork, first forks a worker that polls the same calls and
# reports too (as a DataLoader worker that misused the client would): it must stay quiet, and
# alive, whatever comes.
TRAINER = r'''
import os, sys, time
import orchestrate
fork = "--fork" in sys.argv
if "--install-first" in sys.argv or fork:
    orchestrate.install_signal_handlers()
child = os.fork() if fork else None
if child == 0:
    deadline = time.time() + 20
    while time.time() < deadline:
        if orchestrate.save_requested() or orchestrate.stop_requested():
            print("worker reacted", flush=True)
        orchestrate.progress(999999)
        time.sleep(0.01)
    os._exit(0)
print("ready pid %d" % os.getpid(), flush=True)
step = 0
while True:
    step += 1
    orchestrate.progress(step, loss=1.0 / step, step_time_s=0.02)
    if orchestrate.save_requested():
        print("saved on request at step %d" % step, flush=True)
    if orchestrate.stop_requested():
        print("stopping at step %d" % step, flush=True)
        if child:
            os.kill(child, 9)
        sys.exit(143)
    time.sleep(0.02)
'''


def start(tmp_path, *flags, module_dir=PYTHON_DIR):
    script = tmp_path / "trainer.py"
    script.write_text(TRAINER)
    env = dict(os.environ, PYTHONPATH=module_dir, PYTHONUNBUFFERED="1")
    for name in ("ORCH_TASK_RANK", "RANK"):
        env.pop(name, None)
    proc = subprocess.Popen([sys.executable, str(script), *flags], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    first = proc.stdout.readline()
    assert first.startswith("ready"), first + proc.stderr.read()
    return proc


def finish(proc):
    out, err = proc.communicate(timeout=30)
    return out, err


def save_then_stop(proc, at_step, step_after_save=False):
    """Waits for step `at_step`, asks for a save (SIGUSR1 to the process group, as the agent
    sends it), waits for it (and for one more step with step_after_save), then stops the trainer
    (SIGTERM). Returns everything it printed and its stderr; kills it if anything failed."""
    seen = []
    try:
        wait_for(proc, '"step":%d' % at_step, seen)
        os.killpg(proc.pid, signal.SIGUSR1)
        wait_for(proc, "saved on request at step", seen)
        if step_after_save:
            wait_for(proc, '"step"', seen)
        os.killpg(proc.pid, signal.SIGTERM)
        out, err = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    return "".join(seen) + out, err


def wait_for(proc, text, seen):
    deadline = time.time() + 20
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if text in line:
            return line
    pytest.fail("no %r in %s" % (text, "".join(seen)))


@pytest.mark.parametrize("flags", [(), ("--install-first",)])
def test_usr1_is_a_save_request_answered_once_then_term_stops(tmp_path, flags):
    proc = start(tmp_path, *flags)
    time.sleep(0.1)  # the lazy install happens in the first loop round
    out, err = save_then_stop(proc, 2, step_after_save=True)
    assert proc.returncode == 143, err
    assert out.count("saved on request") == 1, out  # answered once, then cleared
    assert "stopping at step" in out
    steps = [l["step"] for l in lines(out)]
    assert steps == list(range(1, len(steps) + 1))


def test_a_forked_worker_neither_reacts_nor_reports_nor_dies(tmp_path):
    proc = start(tmp_path, "--fork")
    out, err = save_then_stop(proc, 3)  # the whole group is signalled, the worker too
    assert proc.returncode == 143, err
    assert "worker reacted" not in out
    assert "999999" not in out, "a forked worker reported progress"
    assert "stopping at step" in out


def test_a_copied_single_file_is_the_whole_client(tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(os.path.join(PYTHON_DIR, "orchestrate", "__init__.py"), alone / "orchestrate.py")
    proc = start(tmp_path, module_dir=str(alone))
    _, err = save_then_stop(proc, 2)
    assert proc.returncode == 143, err
    check = subprocess.run([sys.executable, "-c", "import orchestrate; print(orchestrate.__file__)"],
                           cwd=str(alone), env=dict(os.environ, PYTHONPATH=str(alone)),
                           capture_output=True, text=True)
    assert check.stdout.strip() == str(alone / "orchestrate.py")


def test_handlers_are_only_installed_from_the_main_thread(orch, capsys):
    import threading
    results = []
    t = threading.Thread(target=lambda: results.append(orch.install_signal_handlers()))
    t.start()
    t.join()
    assert results == [False]
    assert "main thread" in capsys.readouterr().err


def test_a_handler_installed_before_is_still_called(orch):
    called = []
    previous = signal.signal(signal.SIGUSR1, lambda s, f: called.append(s))
    try:
        assert orch.install_signal_handlers()
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(0.05)
        assert orch.save_requested() is True
        assert orch.save_requested() is False
        assert called == [signal.SIGUSR1]
    finally:
        signal.signal(signal.SIGUSR1, previous)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def test_pip_installs_the_package_offline(tmp_path):
    pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    if pip.returncode != 0:
        pytest.skip("pip is not installed for " + sys.executable)
    target = tmp_path / "site"
    source = tmp_path / "python"  # setuptools builds in the source tree: a copy keeps it clean
    shutil.copytree(PYTHON_DIR, str(source), ignore=shutil.ignore_patterns("__pycache__", "tests"))
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                        "--no-index", "--target", str(target), str(source)],
                       capture_output=True, text=True, cwd=str(tmp_path),
                       env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    probe = ("import orchestrate, orchestrate.integrations.hf, orchestrate.integrations.lightning;"
             "print(orchestrate.__file__)")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                       cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=str(target)))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(str(target))
