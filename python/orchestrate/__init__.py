"""The orchestrate client: tell orchestrate what a training job is doing, and do what it asks.

Standard library only, and whole in this one file: `pip install ./python`, or copy this file
next to your training script as `orchestrate.py`. It speaks the progress protocol of
docs/progress-protocol.md for you:

    import orchestrate

    start = load(orchestrate.resume_path()) if orchestrate.resume_path() else 0
    for step in range(start + 1, total + 1):
        with orchestrate.step(step, tokens=orchestrate.tokens(global_batch, seq_len)) as s:
            loss = train_step()
            s.report(loss=loss)
        save_now, stop = orchestrate.requests()    # the same answer on every rank
        if save_now or stop or step % every == 0:
            with orchestrate.atomic_path(path, step=step) as tmp:  # says checkpoint_start
                save(tmp)                          # path inside orchestrate.checkpoint_dir()
            orchestrate.checkpoint(step, path)
        if stop:
            sys.exit(143)

- Lines go to stdout, one whole line at a time, flushed, and only from global rank 0
  (ORCH_TASK_RANK, else RANK, else 0; `set_rank` overrides) and never from a process forked
  from the one that imported this module (a DataLoader worker).
- SIGUSR1 is orchestrate asking for a checkpoint soon (then go on); SIGTERM is a stop (save if
  you can, then exit). The handlers are installed once, lazily, by the first call of
  save_requested(), stop_requested() or requests() from the main thread (or by
  install_signal_handlers(); call it before DataLoader workers are forked, so they inherit a
  handler instead of dying of SIGUSR1). In a forked process they do nothing.
- save_requested() returns True once per request: it clears the request as it answers.
  stop_requested() stays True once a stop came.
"""

import json
import math
import os
import signal
import sys
import threading
import time

__all__ = [
    "PREFIX", "progress", "checkpoint_start", "checkpoint", "resume_path", "checkpoint_dir", "save_requested",
    "stop_requested", "requests", "install_signal_handlers", "tokens", "step", "Step",
    "StepTimer", "rank", "world_size", "is_rank_zero", "set_rank", "atomic_path",
]

PREFIX = "@orchestrate "
DEFAULT_RESUME_ENV = "ORCH_RESUME_FROM"

_lock = threading.RLock()
_owner_pid = os.getpid()  # a forked child (a DataLoader worker) has another pid: it stays quiet
_rank_override = None
_handlers_pid = None  # the pid that installed the signal handlers
_save = False
_stop = False
_previous = {}
_warned = set()
_save_started = {}  # (step, absolute path) -> time.monotonic() of its checkpoint_start


def _warn_once(key, message):
    if key in _warned:
        return
    _warned.add(key)
    sys.stderr.write("orchestrate: " + message + "\n")
    sys.stderr.flush()


# ---- ranks ---------------------------------------------------------------------------------

def _int_env(names, default):
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            try:
                return int(value)
            except ValueError:
                raise ValueError("orchestrate: %s=%r is not an integer" % (name, value)) from None
    return default


def _launched(orch_name, torch_name, default):
    # orchestrate sets both names to the same value (docs/launch-contract.md). When the torch
    # name differs, a launcher inside the task (torchrun under tasks_per_node: 1) numbered the
    # processes again, and its number is the global one.
    orch = _int_env((orch_name,), None)
    torch = _int_env((torch_name,), None)
    if torch is not None and torch != orch:
        return torch
    return orch if orch is not None else default


def rank():
    """This process's global rank: set_rank()'s value, else ORCH_TASK_RANK, else RANK, else 0
    (docs/launch-contract.md). Where RANK is set to another value than ORCH_TASK_RANK (torchrun
    started inside a task renumbers its processes), RANK."""
    if _rank_override is not None:
        return _rank_override
    return _launched("ORCH_TASK_RANK", "RANK", 0)


def world_size():
    """The number of ranks: ORCH_NTASKS, else WORLD_SIZE, else 1 (WORLD_SIZE where it differs,
    as for rank())."""
    return _launched("ORCH_NTASKS", "WORLD_SIZE", 1)


def set_rank(global_rank):
    """Overrides the rank read from the environment (a process that starts its ranks itself, as
    torch.multiprocessing.spawn does, knows better); None goes back to the environment."""
    global _rank_override
    if global_rank is not None and (isinstance(global_rank, bool) or not isinstance(global_rank, int)
                                    or global_rank < 0):
        raise ValueError("orchestrate.set_rank: rank must be an integer >= 0, got %r" % (global_rank,))
    _rank_override = global_rank


def is_rank_zero():
    """True in the one process that reports: global rank 0, not a forked child of it."""
    return os.getpid() == _owner_pid and rank() == 0


# ---- values --------------------------------------------------------------------------------

def _plain(value, where):
    """A JSON-safe copy of value: scalars of tensors and arrays (.item()) as numbers, NaN and
    infinities as null (JSON has neither), lists and dicts element by element."""
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError, RuntimeError) as e:
            raise TypeError("orchestrate: %s must be a scalar, got %r (%s)" % (where, value, e)) from None
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        return [_plain(v, "%s[%d]" % (where, i)) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {str(k): _plain(v, "%s.%s" % (where, k)) for k, v in value.items()}
    try:
        number = float(value)  # numpy and decimal numbers, fractions
    except (TypeError, ValueError):
        raise TypeError("orchestrate: %s must be a number, string, bool, list or dict, got %s"
                        % (where, type(value).__name__)) from None
    return number if math.isfinite(number) else None


def _count(value, where):
    value = _plain(value, where)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("orchestrate: %s must be an integer >= 0, got %r" % (where, value))
    return value


def tokens(global_batch, seq_len):
    """Tokens one step processes in the whole job: global batch (sequences, all ranks) x
    sequence length. That is what `tokens` of a progress line means."""
    return _count(global_batch, "global_batch") * _count(seq_len, "seq_len")


def _emit(fields):
    line = PREFIX + json.dumps(fields, allow_nan=False, separators=(",", ":"))
    with _lock:
        out = sys.stdout
        out.write(line + "\n")
        out.flush()
    return line


# ---- the two events ------------------------------------------------------------------------

_RESERVED = frozenset(("event", "step", "path"))


def _ranks(value):
    out = []
    for i, entry in enumerate(value or []):
        if not isinstance(entry, dict):
            raise ValueError("orchestrate: ranks[%d] must be a dict" % i)
        r = _count(entry.get("rank"), "ranks[%d].rank" % i)
        node = entry.get("node")
        if not isinstance(node, str) or not node:
            raise ValueError("orchestrate: ranks[%d].node must be a non-empty string" % i)
        t = _plain(entry.get("step_time_s"), "ranks[%d].step_time_s" % i)
        if not isinstance(t, (int, float)) or isinstance(t, bool) or not t > 0:
            raise ValueError("orchestrate: ranks[%d].step_time_s must be a number > 0" % i)
        out.append({"rank": r, "node": node, "step_time_s": t})
    return out


def progress(step, tokens=None, loss=None, step_time_s=None, **metrics):
    """Reports that optimizer step `step` (global, counted across resumes) finished.

    tokens: processed by the whole job in this step (see tokens()); step_time_s: its wall time
    (a value that is not > 0 is left out, as the server requires > 0); loss: a number or a
    one-element tensor, NaN or infinite sent as null (with `loss_nonfinite` saying which).
    Other keyword metrics (numbers, strings, lists, dicts) are added as they are; the server
    ignores keys it does not know, and `ranks` is checked against docs/progress-protocol.md.
    Returns the line written, or None where this process does not report (not rank 0)."""
    fields = {"event": "progress", "step": _count(step, "step")}
    if tokens is not None:
        fields["tokens"] = _count(tokens, "tokens")
    if step_time_s is not None:
        t = _plain(step_time_s, "step_time_s")
        if isinstance(t, bool) or not isinstance(t, (int, float, type(None))):
            raise ValueError("orchestrate: step_time_s must be a number, got %r" % (step_time_s,))
        if t is not None and t > 0:
            fields["step_time_s"] = t
    if loss is not None:
        raw = loss.item() if hasattr(loss, "item") and callable(loss.item) else loss
        value = _plain(raw, "loss")
        if isinstance(value, bool) or not isinstance(value, (int, float, type(None))):
            raise ValueError("orchestrate: loss must be a number, got %r" % (loss,))
        fields["loss"] = value
        if value is None:
            fields["loss_nonfinite"] = repr(float(raw))  # 'nan', 'inf' or '-inf'
    for key, value in metrics.items():
        if key in _RESERVED or key in fields:
            raise ValueError("orchestrate: %r is not a metric name progress() can take" % key)
        fields[key] = _ranks(value) if key == "ranks" else _plain(value, key)
    if not is_rank_zero():
        return None
    return _emit(fields)


def checkpoint_dir():
    """$ORCH_CHECKPOINT_DIR: the job's own checkpoint directory at this site, or None outside
    orchestrate. Every checkpoint must lie inside it."""
    return os.environ.get("ORCH_CHECKPOINT_DIR") or None


def _inside(path, directory):
    directory = os.path.normpath(directory)
    return path != directory and path.startswith(directory.rstrip("/") + "/")


def checkpoint_start(step, path):
    """Says that a save of step `step` to `path` (made absolute) begins now: orchestrate's agent
    times it until the checkpoint line and raises io_stall when it runs far longer than the job's
    saves usually take (docs/health.md, "I/O stalls"). atomic_path(path, step=...) and the
    integrations call it for you. Returns the line written, or None where this process does
    not report."""
    path = os.path.normpath(os.path.abspath(os.fspath(path)))
    fields = {"event": "checkpoint_start", "step": _count(step, "step"), "path": path}
    if not is_rank_zero():
        return None
    with _lock:
        _save_started.clear()  # one save at a time: a start without its checkpoint is forgotten
        _save_started[(fields["step"], path)] = time.monotonic()
    return _emit(fields)


def checkpoint(step, path, save_time_s=None, tier="shared", node=None):
    """Reports a complete, durable checkpoint of step `step` at `path` (made absolute). Call it
    only after the save was written, fsynced and renamed into place (see atomic_path()).

    save_time_s: how long the save took; when left out and checkpoint_start() announced this
    step and path, the time since then. Orchestrate's I/O stall bound is a multiple of the
    job's median save time (docs/health.md, "I/O stalls").
    tier "shared" (default): path inside $ORCH_CHECKPOINT_DIR. tier "local": a copy on this
    node's own disk, inside $ORCH_LOCAL_CHECKPOINT_DIR; node defaults to $ORCH_NODE_NAME.
    A path outside the directory is refused by the server; this says so on stderr too.
    Returns the line written, or None where this process does not report."""
    if tier not in ("shared", "local"):
        raise ValueError("orchestrate: tier must be 'shared' or 'local', got %r" % (tier,))
    path = os.path.normpath(os.path.abspath(os.fspath(path)))
    fields = {"event": "checkpoint", "step": _count(step, "step"), "path": path}
    with _lock:
        started = _save_started.pop((fields["step"], path), None)
    if save_time_s is None and started is not None:
        save_time_s = time.monotonic() - started
    if save_time_s is not None:
        t = _plain(save_time_s, "save_time_s")
        if isinstance(t, (int, float)) and not isinstance(t, bool) and t >= 0:
            fields["save_time_s"] = t
    if tier == "local":
        node = node or os.environ.get("ORCH_NODE_NAME")
        if not node:
            raise ValueError("orchestrate: a 'local' checkpoint needs node= or $ORCH_NODE_NAME")
        fields["tier"] = "local"
        fields["node"] = node
    elif node:
        raise ValueError("orchestrate: node= is for tier='local' only")
    if not is_rank_zero():
        return None
    directory = os.environ.get("ORCH_LOCAL_CHECKPOINT_DIR" if tier == "local" else "ORCH_CHECKPOINT_DIR")
    if directory and not _inside(path, directory):
        _warn_once(("outside", path), "checkpoint %s is not inside %s: orchestrate will not register it"
                   % (path, directory))
    return _emit(fields)


class atomic_path:
    """`with atomic_path(path, step=n) as tmp: torch.save(state, tmp)`: write to tmp; on a clean
    exit it is fsynced and renamed to path (and the directory fsynced), so path is never half
    written. On an exception tmp is removed and path left as it was. With `step`, entering
    prints the checkpoint_start line of that step first (checkpoint_start())."""

    def __init__(self, path, step=None):
        self.path = os.fspath(path)
        self.tmp = self.path + ".tmp-%d" % os.getpid()
        self.step = None if step is None else _count(step, "step")

    def __enter__(self):
        if self.step is not None:
            checkpoint_start(self.step, self.path)
        return self.tmp

    def __exit__(self, kind, value, tb):
        if kind is not None:
            if os.path.isfile(self.tmp):
                os.unlink(self.tmp)
            return False
        if os.path.isfile(self.tmp):
            with open(self.tmp, "rb") as f:
                os.fsync(f.fileno())
        os.replace(self.tmp, self.path)
        try:
            fd = os.open(os.path.dirname(os.path.abspath(self.path)), os.O_RDONLY)
        except OSError:
            return False
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)
        return False


def resume_path(env=None):
    """The checkpoint to resume from, or None on a fresh start. It is in $ORCH_RESUME_FROM, or in
    the variable the job spec's checkpoint.resume_env names: pass that name as env. Load it and
    go on at its step + 1; if it cannot be loaded, fail (never start from scratch silently)."""
    return os.environ.get(env or DEFAULT_RESUME_ENV) or None


# ---- what orchestrate asks -----------------------------------------------------------------

def _on_signal(signum, frame):
    global _save, _stop
    if os.getpid() != _handlers_pid:
        return  # a forked worker: the process that installed the handler answers, not it
    if signum == signal.SIGUSR1:
        _save = True
    else:
        _stop = True
    previous = _previous.get(signum)
    if callable(previous):
        previous(signum, frame)


def install_signal_handlers():
    """Installs the SIGUSR1 (save) and SIGTERM (stop) handlers, once per process. Only the main
    thread may install them: elsewhere this says so on stderr and returns False. A handler a
    framework installed before is kept and called after ours."""
    global _handlers_pid
    with _lock:
        if _handlers_pid == os.getpid():
            return True
        if os.getpid() != _owner_pid:
            return False  # a forked child (a DataLoader worker): it must not react
        if threading.current_thread() is not threading.main_thread():
            _warn_once("thread", "signal handlers can only be installed from the main thread; "
                       "call orchestrate.install_signal_handlers() there first")
            return False
        for signum in (signal.SIGUSR1, signal.SIGTERM):
            previous = signal.getsignal(signum)
            _previous[signum] = previous if previous is not _on_signal else None
            signal.signal(signum, _on_signal)
        _handlers_pid = os.getpid()
        return True


def save_requested():
    """True once after orchestrate asked for a checkpoint (SIGUSR1): save soon, report it with
    checkpoint(), and go on training. Answering True clears the request."""
    global _save
    install_signal_handlers()
    if os.getpid() != _handlers_pid:
        return False
    with _lock:
        asked, _save = _save, False
    return asked


def stop_requested():
    """True once orchestrate asked the job to stop (SIGTERM): save if you can, then exit
    (non-zero: 143 is what a process killed by SIGTERM would give). Stays True."""
    install_signal_handlers()
    return os.getpid() == _handlers_pid and _stop


def requests():
    """(save, stop): save_requested() and stop_requested(), made the same on every rank when
    torch.distributed is initialized (any rank asked -> all answer True), so that every rank
    acts on the same step. It does one small all-reduce; call it on every rank, each step."""
    save, stop = save_requested(), stop_requested()
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized() or dist.get_world_size() < 2:
        return save, stop
    torch = sys.modules["torch"]
    device = "cpu"
    if dist.get_backend() == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    flags = torch.tensor([int(save), int(stop)], dtype=torch.int32, device=device)
    dist.all_reduce(flags, op=dist.ReduceOp.MAX)
    return bool(flags[0].item()), bool(flags[1].item())


# ---- timing steps --------------------------------------------------------------------------

class Step:
    """A step being timed: `with orchestrate.step(n, tokens=t) as s: ...; s.report(loss=l)`.
    The progress line is written when the block ends without an exception, with step_time_s
    the block's wall time and the fields given to step() and report()."""

    def __init__(self, number, **fields):
        self.number = number
        self.fields = dict(fields)
        self.started = None
        self.step_time_s = None
        self.line = None

    def report(self, **fields):
        """Adds fields (loss=, tokens=, any metric) to the line written when the block ends."""
        self.fields.update(fields)

    def __enter__(self):
        self.started = time.perf_counter()
        return self

    def __exit__(self, kind, value, tb):
        self.step_time_s = time.perf_counter() - self.started
        if kind is None:
            fields = dict(self.fields)
            fields.setdefault("step_time_s", self.step_time_s)
            self.line = progress(self.number, **fields)
        return False


def step(number, **fields):
    """A context manager that times one step and reports it (see Step)."""
    return Step(number, **fields)


class StepTimer:
    """Times steps from one report to the next, for loops that are not one block:

        timer = orchestrate.StepTimer()
        for step in ...:
            ...
            timer.progress(step, tokens=t, loss=l)   # step_time_s: time since the last call

    The first step is timed from the timer's creation (or its last restart())."""

    def __init__(self):
        self.restart()

    def restart(self):
        self.last = time.perf_counter()

    def lap(self):
        now = time.perf_counter()
        elapsed, self.last = now - self.last, now
        return elapsed

    def progress(self, step_number, **fields):
        fields.setdefault("step_time_s", self.lap())
        return progress(step_number, **fields)
