"""The implementation under test as a process tree that turnbound can always end.

An implementation is untrusted code: it may hang, fork, or start helpers that leave its
process group (`setsid`). Each one runs in a session of its own, carries a marker in its
environment that its descendants inherit, and turnbound is made a child subreaper on
Linux, so a descendant orphaned by its parent is re-parented to turnbound rather than to
init. Killing an implementation ends its group, every descendant psutil finds under it,
and every adopted orphan that carries its marker. The same happens on SIGTERM, SIGINT and
SIGHUP of turnbound (handlers that chain to the previous ones) and at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import itertools
import os
import select
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Mapping, Sequence
from types import FrameType
from typing import Any

import psutil

MARKER = "TURNBOUND_IUT"
"""Environment variable naming the implementation a process belongs to."""
PR_SET_CHILD_SUBREAPER = 36

_live: weakref.WeakSet[Child] = weakref.WeakSet()
_numbers = itertools.count(1)
_previous: dict[int, Any] = {}
_setup = threading.Lock()
_ready = False


class Child:
    """One started implementation: non-blocking pipes to its stdin, stdout and stderr."""

    def __init__(self, command: Sequence[str], cwd: str | None, env: Mapping[str, str] | None) -> None:
        _prepare()
        self.marker = f"{os.getpid()}-{next(_numbers)}"
        environment = dict(os.environ if env is None else env)
        environment[MARKER] = self.marker
        self.popen = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=environment,
            start_new_session=True,
            bufsize=0,
        )
        assert self.popen.stdin and self.popen.stdout and self.popen.stderr
        self.pid = self.popen.pid
        self.stdin = self.popen.stdin.fileno()
        self.stdout = self.popen.stdout.fileno()
        self.stderr = self.popen.stderr.fileno()
        for fd in (self.stdin, self.stdout, self.stderr):
            os.set_blocking(fd, False)
        self._stdin_open = True
        _live.add(self)

    def running(self) -> bool:
        return self.popen.poll() is None

    def write(self, data: memoryview) -> int:
        if not self._stdin_open:
            raise BrokenPipeError("stdin is closed")
        return os.write(self.stdin, data)

    def wait_writable(self, timeout: float) -> None:
        with contextlib.suppress(OSError, ValueError):
            select.select([], [self.stdin], [], timeout)

    def close_stdin(self) -> None:
        if self._stdin_open:
            self._stdin_open = False
            with contextlib.suppress(OSError):
                self.popen.stdin.close()  # type: ignore[union-attr]

    def wait(self, timeout: float) -> int | None:
        """The exit code (negative: killed by that signal), or None if still running after `timeout`."""
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """End the process, its group and every descendant found, and reap what is ours to reap."""
        victims = self._signal_all()
        with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL cannot be ignored
            self.popen.wait(timeout=5)
        me = os.getpid()
        for p in victims:  # orphans re-parented to turnbound would otherwise stay zombies
            with contextlib.suppress(psutil.Error, ChildProcessError):
                if p.ppid() == me:
                    p.wait(timeout=1)
        _live.discard(self)

    def _signal_all(self) -> list[psutil.Process]:
        """SIGKILL to the group, the descendants and the adopted orphans; no waiting (signal-safe)."""
        victims = _descendants(self.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        victims += _marked(self.marker)
        for p in victims:
            with contextlib.suppress(psutil.Error):
                p.kill()
        return victims

    def close(self) -> None:
        self._stdin_open = False
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return list(psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        return []


def _marked(marker: str) -> list[psutil.Process]:
    """Processes carrying `marker` that left the tree: adopted by turnbound (a subreaper) or,
    where turnbound cannot be one, anywhere."""
    try:
        candidates = psutil.Process().children() if _is_subreaper() else list(psutil.process_iter())
    except psutil.Error:
        return []
    found = []
    for p in candidates:
        with contextlib.suppress(psutil.Error, OSError):
            if p.environ().get(MARKER) == marker:
                found.append(p)
    return found


_subreaper = False


def _is_subreaper() -> bool:
    return _subreaper


def _prepare() -> None:
    """Once per process: become a subreaper (Linux), kill every implementation at exit and on signals."""
    global _ready, _subreaper
    with _setup:
        if _ready:
            return
        _ready = True
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        atexit.register(kill_all)
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                previous = signal.getsignal(signum)
                if previous is signal.SIG_IGN:  # e.g. SIGHUP under nohup: keep running, keep the children
                    continue
                _previous[signum] = previous
                signal.signal(signum, _on_signal)
        if hasattr(os, "register_at_fork"):  # POSIX: the explorer's and mutation's pools fork
            os.register_at_fork(after_in_child=_forget_in_child)


def _forget_in_child() -> None:
    """A forked child (a pool worker of the explorer or of mutation) owns none of the parent's
    implementations: it must neither kill them nor outlive a signal because the handler it
    inherited went after them. It gets the signals' earlier dispositions back, and prepares
    afresh if it starts implementations of its own."""
    global _ready, _setup, _subreaper
    _live.clear()
    _setup = threading.Lock()  # another thread may have held it at the fork
    _ready = _subreaper = False
    if threading.current_thread() is threading.main_thread():
        for signum, previous in _previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(signum, previous)
    _previous.clear()


def kill_all() -> None:
    for child in list(_live):
        child.kill()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    """Kill every implementation first, then do what the signal did before turnbound's handler."""
    for child in list(_live):
        child._signal_all()
    previous = _previous.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)
        return
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
