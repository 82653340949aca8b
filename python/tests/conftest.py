# The client's tests run against python/ itself (no install needed): python3 -m pytest python/tests
import importlib
import os
import sys

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

LAUNCH_VARS = ("ORCH_TASK_RANK", "RANK", "ORCH_NTASKS", "WORLD_SIZE", "ORCH_RESUME_FROM",
               "ORCH_CHECKPOINT_DIR", "ORCH_LOCAL_CHECKPOINT_DIR", "ORCH_NODE_NAME")


@pytest.fixture
def orch(monkeypatch):
    """A fresh orchestrate module in an environment without any launch variable."""
    for name in LAUNCH_VARS:
        monkeypatch.delenv(name, raising=False)
    import orchestrate
    importlib.reload(orchestrate)
    yield orchestrate
    orchestrate.set_rank(None)


def fresh_integration(name, monkeypatch, tmp_path):
    """orchestrate.integrations.<name> imported afresh, with $ORCH_CHECKPOINT_DIR at tmp_path; a
    generator for a fixture, which puts the default USR1 and TERM handlers back afterwards."""
    import signal
    monkeypatch.setenv("ORCH_CHECKPOINT_DIR", str(tmp_path))
    module = importlib.import_module("orchestrate.integrations." + name)
    importlib.reload(module)
    yield module
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def lines(text):
    """The protocol lines of an output, as dicts, in order."""
    import json
    return [json.loads(l[len("@orchestrate "):]) for l in text.splitlines() if l.startswith("@orchestrate ")]
