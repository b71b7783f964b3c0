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
import json
import os
import selectors
import sys
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from turnbound.properties.conformance import process as processes
from turnbound.properties.scheduler import (
    FAULT_EXIT,
    FAULT_HANG,
    FAULT_PROTOCOL,
    End,
    OpRequest,
    Request,
    RunFunction,
    SchedulerFault,
)
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
STDERR_LINE = 300
"""Characters kept of one stderr line."""
READ_BLOCK = 1 << 16
"""Bytes asked for by one read of the implementation's output."""
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
        _check_text("error", error)
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
        _check_text("end: terminal", terminal)
        counters = msg.get("counters")
        if not isinstance(counters, dict):
            raise ProtocolError('an end message needs "counters", an object')
        for name, value in counters.items():
            _check_text("end: counters", name)
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
        _check_text(what, name)
        if not isinstance(value, bool | int | str):
            raise ProtocolError(f"{what}: {name} must be a boolean, integer or string")
        if isinstance(value, str):
            _check_text(f"{what}: {name}", value)


def _check_text(what: str, text: str) -> None:
    """JSON can carry a lone surrogate (`\\ud800`); no report could print it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ProtocolError(f"{what}: a string with a lone surrogate ({text!r})") from None


def dump(msg: Mapping[str, Any]) -> str:
    return json.dumps(msg, separators=(",", ":"))


# -- the host side: a subprocess behind the Scheduler interface -----------------------


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
            self._stderr.append(_clip(text, STDERR_LINE))

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
            raise self._fail(f"{exc}: {_clip(_shown(item))}", FAULT_PROTOCOL) from None
        try:
            request = parse_request(msg, self.table)
        except ProtocolError as exc:
            raise self._fail(f"protocol error: {exc}: {_clip(_shown(item))}", FAULT_PROTOCOL) from None
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


def decode_message(line: bytes) -> object:
    """One line as JSON, within the protocol's bounds; `ProtocolError` names what is wrong with it.

    Strict UTF-8, no NaN or Infinity, integers within 64 bits, and no nesting deeper than
    Python's parser allows — all reported, never raised as anything else.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"invalid JSON (not UTF-8 at byte {exc.start})") from None
    try:
        return json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except ProtocolError:
        raise
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise ProtocolError("invalid JSON (nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer too long for int()
        raise ProtocolError(f"invalid JSON ({_clip(str(exc), 80)})") from None


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > 19 or not -(1 << 63) <= int(text) < 1 << 63:
        raise ProtocolError(f"protocol error: an integer of {digits} digits, outside the 64-bit range")
    return int(text)


def _no_constant(text: str) -> object:
    raise ProtocolError(f"invalid JSON ({text} is not a JSON number)")


def dump_line(msg: Mapping[str, Any]) -> bytes:
    return (dump(msg) + "\n").encode()


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _shown(line: bytes) -> str:
    return line.decode("utf-8", errors="replace").strip()


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
    """`python -m turnbound.properties.conformance.wire PROFILE`: the reference, speaking protocol v1."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        sys.stderr.write("usage: python -m turnbound.properties.conformance.wire PROFILE\n")
        return 2
    return serve(reference_run(load_profile(args[0])))


if __name__ == "__main__":
    sys.exit(main())
