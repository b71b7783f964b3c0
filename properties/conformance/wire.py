"""Wire protocol v1: an implementation under test in another process, driven over JSON lines.

turnbound is the host. It writes `start`, `result`/`raise` and `stop` to the
implementation's stdin and reads `op` and `end` from its stdout, one JSON object per
line. `WireScheduler` puts such a process behind the `Scheduler` interface; `serve`
is the other side, for a Python scheduler that should be reachable as a command.

An implementation is untrusted: every read has a deadline, lines, messages, nesting and
integers are bounded, a misbehaving process is killed with every descendant and
restarted for the next case, and none is left running when turnbound exits or is
signalled (`wire_process`).
"""

from __future__ import annotations

import collections
import contextlib
import os
import selectors
import time
from collections.abc import Mapping, Sequence
from typing import Any

from turnbound.properties.conformance import process as processes
from turnbound.properties.conformance.messages import (
    CANCEL,
    MAX_LINE,
    MAX_MESSAGES,
    READ_BLOCK,
    STDERR_LINE,
    STDERR_LINES,
    ProtocolError,
    clip,
    decode_message,
    dump_line,
    outcome_message,
    parse_request,
    shown,
    start_message,
)
from turnbound.properties.scheduler import (
    FAULT_EXIT,
    FAULT_HANG,
    FAULT_PROTOCOL,
    End,
    Request,
    SchedulerFault,
)
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Table

_EOF = object()
_OVERLONG = object()


class WireScheduler:
    """A subprocess that speaks protocol v1, one `start` per case, restarted after a fault.

    Each call of `start`/`send` waits at most `timeout` seconds for the next message.
    Its output is read in the calling thread through a selector, in blocks, so a flood
    costs one system call per block and no reader thread can be left waiting on a pipe
    that a stray descendant of the implementation still holds.
    """

    def __init__(
        self,
        command: Sequence[str],
        table: Table,
        *,
        timeout: float = 10.0,
        max_line: int = MAX_LINE,
        max_messages: int = MAX_MESSAGES,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if isinstance(command, str) or not command:
            raise ValueError("the command must be a non-empty list of arguments")
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.command = list(command)
        self.table = table
        self.timeout = timeout
        self.max_line = max_line
        self.max_messages = max_messages
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.starts = 0
        """How many processes were started: 1 unless faults forced restarts."""
        self._proc: processes.Child | None = None
        self._out = bytearray()
        self._scanned = 0
        self._out_eof = False
        self._err = bytearray()
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._selector: selectors.BaseSelector | None = None
        self._in_case = False
        self._messages = 0

    # -- Scheduler ------------------------------------------------------------

    def start(self, params: Mapping[str, int]) -> Request:
        if self._proc is not None and self._in_case and self._proc.running():
            self._cancel()
        if self._proc is None or not self._proc.running():
            self.spawn()
        self._in_case = True
        self._messages = 0
        self._write(start_message(self.table.name, params))
        return self._receive()

    def send(self, outcome: Outcome) -> Request:
        if not self._in_case:
            raise SchedulerFault("the implementation ended the case; there is nothing to answer")
        self._write(outcome_message(outcome))
        return self._receive()

    def close(self) -> None:
        """End an unfinished case, send `stop`, close stdin, give the process `timeout` to exit, then
        kill what is left of it; never raises."""
        try:
            if self._proc is not None and self._in_case and self._proc.running():
                self._cancel()
            proc = self._proc
            if proc is not None and proc.running():
                self._write({"type": "stop"})
                proc.close_stdin()
                proc.wait(self.timeout)
        except SchedulerFault:
            pass
        finally:
            self.kill()

    def _cancel(self, limit: int = 100) -> None:
        """End an unfinished case by raising CANCEL at each call; a process that does not end it is killed."""
        self._messages = 0
        try:
            for _ in range(limit):
                self._write({"type": "raise", "error": CANCEL})
                if isinstance(self._receive(), End):
                    return
        except SchedulerFault:
            return  # already killed: the next case starts a new process
        self.kill()

    # -- process ----------------------------------------------------------------

    def spawn(self) -> None:
        """Start a new process (killing the old one); `SchedulerFault` if the command cannot start."""
        self.kill()
        try:
            proc = processes.Child(self.command, cwd=self.cwd, env=self.env)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise SchedulerFault(f"cannot start {self.command[0]!r}: {reason}", FAULT_EXIT) from None
        self._proc = proc
        self.starts += 1
        self._out.clear()
        self._scanned = 0
        self._out_eof = False
        self._err.clear()
        self._stderr.clear()
        self._selector = selectors.DefaultSelector()
        self._selector.register(proc.stdout, selectors.EVENT_READ, "out")
        self._selector.register(proc.stderr, selectors.EVENT_READ, "err")

    def kill(self) -> None:
        """Kill the implementation with every descendant and reap it; idempotent."""
        proc, self._proc = self._proc, None
        self._in_case = False
        if proc is None:
            return
        proc.kill()
        self._drain_stderr(proc, 0.2)
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        proc.close()

    def stderr_tail(self) -> list[str]:
        return list(self._stderr)

    # -- reading ---------------------------------------------------------------

    def _pump(self, timeout: float) -> bool:
        """Read what the process has written within `timeout`; False if nothing came."""
        assert self._selector is not None
        events = self._selector.select(max(timeout, 0))
        for key, _ in events:
            fd = key.fd
            try:
                chunk = os.read(fd, READ_BLOCK)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self._selector.unregister(fd)
            if key.data == "out":
                if chunk:
                    self._out += chunk
                else:
                    self._out_eof = True
            else:
                self._stderr_chunk(chunk)
        return bool(events)

    def _stderr_chunk(self, chunk: bytes) -> None:
        if not chunk:  # end of stderr: what is left is the last line
            self._stderr_line(bytes(self._err))
            self._err.clear()
            return
        self._err += chunk
        *lines, rest = bytes(self._err).split(b"\n")
        for line in lines[-STDERR_LINES:]:
            self._stderr_line(line)
        self._err[:] = rest[-STDERR_LINE:]

    def _stderr_line(self, line: bytes) -> None:
        text = line.decode("utf-8", errors="replace").strip()
        if text:
            self._stderr.append(clip(text, STDERR_LINE))

    def _drain_stderr(self, proc: processes.Child, grace: float) -> None:
        """Collect the last stderr lines of a process that is ending, for at most `grace` seconds."""
        sel = self._selector
        if sel is None:
            return
        with contextlib.suppress(KeyError, ValueError):
            sel.unregister(proc.stdout)
        deadline = time.monotonic() + grace
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._pump(remaining):
                break

    def _line(self, deadline: float) -> bytes | object:
        """The next non-blank stdout line, _EOF, _OVERLONG, or None when the deadline passes."""
        while True:
            newline = self._out.find(b"\n", self._scanned)
            if newline >= 0:
                line = bytes(self._out[:newline])
                del self._out[: newline + 1]
                self._scanned = 0
                if len(line) > self.max_line:
                    return _OVERLONG
                if line.strip():
                    return line
                continue
            self._scanned = len(self._out)
            if len(self._out) > self.max_line:
                return _OVERLONG
            if self._out_eof:
                if self._out.strip():
                    line = bytes(self._out)
                    self._out.clear()
                    self._scanned = 0
                    return line
                return _EOF
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._pump(remaining)

    # -- messages ---------------------------------------------------------------

    def _fail(self, reason: str, kind: str) -> SchedulerFault:
        """Kill the process (it restarts for the next case) and describe the fault with its stderr."""
        self.kill()
        tail = self.stderr_tail()
        if tail:
            reason += "; stderr: " + " | ".join(tail)
        return SchedulerFault(reason, kind)

    def _write(self, msg: Mapping[str, Any]) -> None:
        data = dump_line(msg)
        proc = self._proc
        assert proc is not None
        view = memoryview(data)
        deadline = time.monotonic() + self.timeout
        while view:
            try:
                view = view[proc.write(view) :]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ValueError, OSError):
                raise self._fail(self._exit_reason("stopped reading its input"), FAULT_EXIT) from None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._fail(f"does not read its input (blocked for {self.timeout:g}s)", FAULT_HANG)
            proc.wait_writable(remaining)

    def _receive(self) -> Request:
        self._messages += 1
        if self._messages > self.max_messages:
            raise self._fail(f"flood: more than {self.max_messages} messages in one case", FAULT_PROTOCOL)
        item = self._line(time.monotonic() + self.timeout)
        if item is None:
            raise self._fail(f"no message within {self.timeout:g}s (the implementation hangs)", FAULT_HANG)
        if item is _EOF:
            raise self._fail(self._exit_reason("closed its output"), FAULT_EXIT)
        if item is _OVERLONG:
            raise self._fail(f"flood: a line longer than {self.max_line} bytes", FAULT_PROTOCOL)
        assert isinstance(item, bytes)
        try:
            msg = decode_message(item)
        except ProtocolError as exc:
            raise self._fail(f"{exc}: {clip(shown(item))}", FAULT_PROTOCOL) from None
        try:
            request = parse_request(msg, self.table)
        except ProtocolError as exc:
            raise self._fail(f"protocol error: {exc}: {clip(shown(item))}", FAULT_PROTOCOL) from None
        if isinstance(request, End):
            self._in_case = False
        return request

    def _exit_reason(self, what: str) -> str:
        proc = self._proc
        code = proc.wait(1.0) if proc is not None else None
        if code is None:
            return f"the implementation {what} before ending the case"
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return f"the implementation {how} before ending the case"
