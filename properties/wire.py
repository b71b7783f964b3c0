"""Wire protocol v1: an implementation under test in another process, driven over JSON lines.

turnbound is the host. It writes `start`, `result`/`raise` and `stop` to the
implementation's stdin and reads `op` and `end` from its stdout, one JSON object per
line. `WireScheduler` puts such a process behind the `Scheduler` interface; `serve`
is the other side, for a Python scheduler that should be reachable as a command.

An implementation is untrusted: every read has a deadline, lines and messages are
bounded, a misbehaving process is killed with its whole process group and restarted
for the next case, and none is left running when turnbound exits.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import json
import os
import queue
import selectors
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import IO, Any

from turnbound.properties.scheduler import End, OpRequest, Request, RunFunction, SchedulerFault
from turnbound.reference.host import Host
from turnbound.reference.interpreter import run
from turnbound.reference.outcomes import Outcome
from turnbound.reference.profiles import load_profile
from turnbound.reference.table import Table
from turnbound.reference.trace import Trace
from turnbound.reference.types import Value, conforms

PROTOCOL = 1
MAX_LINE = 1 << 20
"""Bytes in one message line before the implementation counts as flooding."""
MAX_MESSAGES = 10_000
"""Messages in one case before the implementation counts as flooding."""
STDERR_LINES = 5
"""How many of the implementation's last stderr lines a failure reason shows."""
CANCEL = "turnbound-cancel"
"""A failure no table can declare (not an identifier): raised to end a case turnbound has decided.

A conforming implementation rejects it by its runtime contract and ends the case at
`contract_violation`, so the same process can take the next case without a restart.
"""

_EOF = object()
_OVERLONG = object()


class ProtocolError(ValueError):
    """A message that protocol v1 does not allow; the text says what is wrong with it."""


# -- messages -------------------------------------------------------------------------


def start_message(profile: str, params: Mapping[str, int]) -> dict[str, Any]:
    return {"type": "start", "protocol": PROTOCOL, "profile": profile, "params": dict(params)}


def outcome_message(outcome: Outcome) -> dict[str, Any]:
    """A host answer on the wire: `result` with facts, or `raise` with the failure's fields inline."""
    if outcome.raise_ is None:
        return {"type": "result", "facts": dict(outcome.facts or {})}
    return {"type": "raise", "error": outcome.raise_, **outcome.fields}


def message_outcome(msg: Mapping[str, Any]) -> Outcome:
    """The outcome a `result` or `raise` message carries."""
    kind = msg.get("type")
    if kind == "result":
        facts = msg.get("facts", {})
        if not isinstance(facts, dict):
            raise ProtocolError('"facts" must be an object')
        _check_scalars("facts", facts)
        return Outcome(facts=dict(facts))
    if kind == "raise":
        error = msg.get("error")
        if not isinstance(error, str):
            raise ProtocolError('a raise message needs "error", a string')
        fields = {k: v for k, v in msg.items() if k not in ("type", "error")}
        _check_scalars("fields", fields)
        return Outcome.of_raise(error, **fields)
    raise ProtocolError(f"expected a result or raise message, got type {kind!r}")


def parse_request(msg: object, table: Table) -> Request:
    """An `op` or `end` message as a request, checked against the table's vocabulary."""
    if not isinstance(msg, dict):
        raise ProtocolError(f"a message must be a JSON object, got {type(msg).__name__}")
    kind = msg.get("type")
    if kind == "op":
        op = msg.get("op")
        if not isinstance(op, str):
            raise ProtocolError('an op message needs "op", a string')
        if op not in table.operations:
            raise ProtocolError(f"unknown op {op!r}; operations: {', '.join(table.operations)}")
        args = msg.get("args", {})
        if not isinstance(args, dict):
            raise ProtocolError(f'op {op}: "args" must be an object')
        _check_scalars(f"op {op}: args", args)
        for name, type_ in table.operations[op].args:
            if name in args and not conforms(args[name], type_):
                raise ProtocolError(f"op {op}: arg {name}={json.dumps(args[name])} is not a {type_}")
        return OpRequest(op, dict(args))
    if kind == "end":
        terminal = msg.get("terminal")
        if not isinstance(terminal, str):
            raise ProtocolError('an end message needs "terminal", a string')
        counters = msg.get("counters")
        if not isinstance(counters, dict):
            raise ProtocolError('an end message needs "counters", an object')
        for name, value in counters.items():
            if isinstance(value, bool) or not isinstance(value, int):
                raise ProtocolError(f"end: counter {name}={json.dumps(value)} is not an integer")
        return End(terminal, dict(counters))
    if kind is None:
        raise ProtocolError('the message has no "type"')
    raise ProtocolError(f"expected an op or end message, got type {kind!r}")


def trace_messages(trace: Trace) -> list[dict[str, Any]]:
    """A reference trace as the protocol transcript of its run: what a recorded log looks like."""
    out = [start_message(trace.profile, trace.params)]
    for step in trace.steps:
        out.append({"type": "op", "op": step.op, "args": dict(step.args)})
        out.append(outcome_message(step.outcome))
    out.append({"type": "end", "terminal": trace.terminal, "counters": dict(trace.counters)})
    return out


def _check_scalars(what: str, values: Mapping[str, Any]) -> None:
    for name, value in values.items():
        if not isinstance(value, bool | int | str):
            raise ProtocolError(f"{what}: {name} must be a boolean, integer or string")


def dump(msg: Mapping[str, Any]) -> str:
    return json.dumps(msg, separators=(",", ":"))


# -- the host side: a subprocess behind the Scheduler interface -----------------------

_live: weakref.WeakSet[WireScheduler] = weakref.WeakSet()


@atexit.register
def _kill_all() -> None:
    for scheduler in list(_live):
        scheduler.kill()


class WireScheduler:
    """A subprocess that speaks protocol v1, one `start` per case, restarted after a fault.

    Each call of `start`/`send` waits at most `timeout` seconds for the next message.
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
        if not command:
            raise ValueError("an empty command")
        self.command = list(command)
        self.table = table
        self.timeout = timeout
        self.max_line = max_line
        self.max_messages = max_messages
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.starts = 0
        """How many processes were started: 1 unless faults forced restarts."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[object] = queue.Queue()
        self._stop = threading.Event()
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._stderr_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._in_case = False
        self._messages = 0
        _live.add(self)

    # -- Scheduler ------------------------------------------------------------

    def start(self, params: Mapping[str, int]) -> Request:
        if self._proc is not None and self._in_case and self._proc.poll() is None:
            self._cancel()
        if self._proc is None or self._proc.poll() is not None:
            self._spawn()
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
        kill its group."""
        if self._proc is not None and self._in_case and self._proc.poll() is None:
            self._cancel()
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                self._write({"type": "stop"})
            except SchedulerFault:
                return
            self._close_stdin()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=self.timeout)
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

    def _spawn(self) -> None:
        self.kill()
        try:
            proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
                bufsize=0,
            )
        except OSError as exc:
            raise SchedulerFault(f"cannot start {self.command[0]!r}: {exc.strerror or exc}") from None
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        os.set_blocking(proc.stdin.fileno(), False)
        self._proc = proc
        self.starts += 1
        self._stop = threading.Event()
        self._lines = queue.Queue(maxsize=64)
        self._stderr.clear()
        self._threads = [
            threading.Thread(
                target=_read_lines, args=(proc.stdout, self._lines, self.max_line, self._stop), daemon=True
            ),
            threading.Thread(target=self._read_stderr, args=(proc.stderr,), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def kill(self) -> None:
        """Kill the implementation's whole process group and reap it; idempotent."""
        proc, self._proc = self._proc, None
        self._in_case = False
        if proc is None:
            return
        self._stop.set()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL can not be ignored
            proc.wait(timeout=5)
        for t in self._threads:
            t.join(timeout=1)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _close_stdin(self) -> None:
        if self._proc is not None and self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()

    def _read_stderr(self, stream: IO[bytes]) -> None:
        while True:
            try:
                line = stream.readline(4096)
            except (OSError, ValueError):
                return
            if not line:
                return
            text = line.decode("utf-8", errors="replace").rstrip()
            if text:
                with self._stderr_lock:
                    self._stderr.append(text[:300])

    def stderr_tail(self) -> list[str]:
        with self._stderr_lock:
            return list(self._stderr)

    # -- messages ---------------------------------------------------------------

    def _fail(self, reason: str) -> SchedulerFault:
        """Kill the process (it restarts for the next case) and describe the fault with its stderr."""
        proc = self._proc
        if proc is not None:
            self._kill_group(proc)
            if len(self._threads) > 1:
                self._threads[1].join(timeout=1)  # the last stderr lines, up to the kill
        self.kill()
        tail = self.stderr_tail()
        if tail:
            reason += "; stderr: " + " | ".join(tail)
        return SchedulerFault(reason)

    @staticmethod
    def _kill_group(proc: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    def _write(self, msg: Mapping[str, Any]) -> None:
        data = dump_line(msg)
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        fd = proc.stdin.fileno()
        view = memoryview(data)
        deadline = time.monotonic() + self.timeout
        while view:
            try:
                view = view[os.write(fd, view) :]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ValueError, OSError):
                raise self._fail(self._exit_reason("stopped reading its input")) from None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._fail(f"does not read its input (blocked for {self.timeout:g}s)")
            with selectors.DefaultSelector() as sel:
                sel.register(fd, selectors.EVENT_WRITE)
                sel.select(remaining)

    def _receive(self) -> Request:
        self._messages += 1
        if self._messages > self.max_messages:
            raise self._fail(f"flood: more than {self.max_messages} messages in one case")
        try:
            item = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            raise self._fail(f"no message within {self.timeout:g}s (the implementation hangs)") from None
        if item is _EOF:
            raise self._fail(self._exit_reason("closed its output"))
        if item is _OVERLONG:
            raise self._fail(f"flood: a line longer than {self.max_line} bytes")
        assert isinstance(item, bytes)
        text = item.decode("utf-8", errors="replace").strip()
        try:
            msg = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self._fail(f"invalid JSON ({exc.msg}): {_clip(text)}") from None
        try:
            request = parse_request(msg, self.table)
        except ProtocolError as exc:
            raise self._fail(f"protocol error: {exc}: {_clip(text)}") from None
        if isinstance(request, End):
            self._in_case = False
        return request

    def _exit_reason(self, what: str) -> str:
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                code = None
        if code is None:
            return f"the implementation {what} before ending the case"
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return f"the implementation {how} before ending the case"


def dump_line(msg: Mapping[str, Any]) -> bytes:
    return (dump(msg) + "\n").encode()


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _read_lines(stream: IO[bytes], lines: queue.Queue[object], max_line: int, stop: threading.Event) -> None:
    """Reader thread: one item per stdout line; a bounded queue, so a flood waits instead of piling up."""

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                lines.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    while not stop.is_set():
        try:
            line = stream.readline(max_line + 1)
        except (OSError, ValueError):
            line = b""
        if not line:
            put(_EOF)
            return
        if len(line) > max_line and not line.endswith(b"\n"):
            put(_OVERLONG)
            return
        if line.strip() and not put(line):
            return


# -- the implementation side: a Python scheduler as a protocol v1 command -------------


class _WireHost:
    def __init__(self, stdin: IO[str], stdout: IO[str]) -> None:
        self.stdin = stdin
        self.stdout = stdout

    def call(self, op: str, args: Mapping[str, Value]) -> Outcome:
        self.stdout.write(dump({"type": "op", "op": op, "args": dict(args)}) + "\n")
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            raise SystemExit("turnbound closed the connection in the middle of a case")
        return message_outcome(json.loads(line))


def serve(run: RunFunction, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Answer protocol v1 on stdin/stdout with a synchronous Python scheduler, until `stop`."""
    inp = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout
    host = _WireHost(inp, out)
    for line in inp:
        if not line.strip():
            continue
        msg = json.loads(line)
        if msg.get("type") == "stop":
            return 0
        if msg.get("type") != "start" or msg.get("protocol") != PROTOCOL:
            sys.stderr.write(f"expected a protocol {PROTOCOL} start message, got: {line.strip()}\n")
            return 2
        terminal, counters = run(dict(msg.get("params", {})), host)
        out.write(dump({"type": "end", "terminal": terminal, "counters": dict(counters)}) + "\n")
        out.flush()
    return 0


def reference_run(table: Table) -> RunFunction:
    """The reference interpreter as a synchronous scheduler, e.g. to serve it over the wire."""

    def run_reference(params: Mapping[str, int], host: Host) -> tuple[str, Mapping[str, int]]:
        trace = run(table, host, params)
        return trace.terminal, trace.counters

    return run_reference


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m turnbound.properties.wire PROFILE`: the reference as a protocol v1 implementation."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        sys.stderr.write("usage: python -m turnbound.properties.wire PROFILE\n")
        return 2
    return serve(reference_run(load_profile(args[0])))


if __name__ == "__main__":
    sys.exit(main())
