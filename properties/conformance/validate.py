"""Trace validation: does a log recorded from a real run follow the table?

The log holds protocol v1 messages, one JSON object per line: `start`, then each host
call as an `op` followed by the host's `result` or `raise`, then `end` — several runs
may follow each other (`stop` lines are ignored). The table is stepped alongside: each
`op` must be the call the table makes at that point, with the same arguments; the
host's answers drive the table on; each `end` must name the terminal and counters the
table reached. The first line that no transition explains rejects the log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from turnbound.properties.conformance.messages import ProtocolError, message_outcome, parse_request
from turnbound.reference.errors import DefinitionError, RunError
from turnbound.reference.jsonfile import parse_json, read_text
from turnbound.reference.judge import Judge
from turnbound.reference.limits import MAX_LINE_BYTES, MAX_LOG_BYTES
from turnbound.reference.machine import Machine
from turnbound.reference.stepping import End, OpRequest, Request, Turn
from turnbound.reference.table import Claim, Table, TraceProperty, Transition
from turnbound.reference.trace import HORIZON, Step, Trace
from turnbound.reference.types import Value

Message = tuple[int, dict[str, Any]]


@dataclass(frozen=True)
class Rejection:
    line: int
    message: str


@dataclass(frozen=True)
class BrokenClaim:
    run: int
    """1-based."""
    name: str
    kind: str
    expect: str


@dataclass(frozen=True)
class Validation:
    profile: str
    source: str
    runs: tuple[Trace, ...]
    """Each run the table followed; after a rejection, the last is the part up to it."""
    rejection: Rejection | None
    broken: tuple[BrokenClaim, ...] = ()
    """Claims of the table the followed runs break, as the judge finds them (the log is not
    rejected for them: it did what the table says)."""

    @property
    def accepted(self) -> bool:
        return self.rejection is None

    @property
    def operations(self) -> int:
        return sum(len(r.steps) for r in self.runs)


class _Rejected(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.rejection = Rejection(line, message)


def read_log(path: Path) -> list[Message]:
    """The log's messages with their line numbers; a malformed line is an error naming it."""
    text = read_text(path, "the log", MAX_LOG_BYTES)
    messages: list[Message] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        if len(raw) > MAX_LINE_BYTES:
            raise DefinitionError(f"{path}:{n}: the line is longer than {MAX_LINE_BYTES} characters")
        msg = parse_json(raw, f"{path}:{n}")
        if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
            raise DefinitionError(f'{path}:{n}: expected a JSON object with a "type"')
        messages.append((n, msg))
    return messages


def validate(table: Table, path: Path, params: Mapping[str, int] | None = None) -> Validation:
    """Check every run in the log at `path` against the table."""
    log = _Cursor(read_log(path))
    runs: list[Trace] = []
    judge = Judge(table)
    broken: list[BrokenClaim] = []
    try:
        while not log.done:
            n, msg = log.take("a start message")
            if msg["type"] == "stop":
                continue
            if msg["type"] != "start":
                raise _Rejected(n, f"expected a start message, the log has {_describe(msg)}")
            run = _Run(table, path, _params(table, path, n, msg, params or {}), log, runs, judge)
            try:
                run.follow()
            finally:
                broken += [
                    BrokenClaim(
                        len(runs), c.name, c.kind if isinstance(c, Claim) else "trace property", c.expect
                    )
                    for c in run.turn.broken.values()
                ]
    except _Rejected as exc:
        return Validation(table.name, str(path), tuple(runs), exc.rejection, tuple(broken))
    if not runs:
        raise DefinitionError(f"{path}: the log holds no run (no start message)")
    return Validation(table.name, str(path), tuple(runs), None, tuple(broken))


class _JudgedTurn(Turn[None]):
    """The one run loop, with every claim the turn breaks noted by the judge (first time only)."""

    def __init__(self, machine: Machine, judge: Judge) -> None:
        super().__init__(machine)
        self.judge = judge
        self.monitor = judge.monitors.initial()
        self.broken: dict[str, Claim | TraceProperty] = {}

    def on_state(self) -> None:
        for c in self.judge.broken_invariants(self.machine.env(self.state)):
            self.broken.setdefault(c.name, c)

    def on_call(self, step: Step) -> None:
        self.monitor = self.judge.monitors.step(self.monitor, step.op, step.args, step.outcome)
        for p in self.judge.broken_properties(self.monitor):
            self.broken.setdefault(p.name, p)

    def on_terminal(self) -> None:
        for c in self.judge.broken_bounds(self.state.location, self.machine.env(self.state)):
            self.broken.setdefault(c.name, c)


class _Cursor:
    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        self.at = 0

    @property
    def done(self) -> bool:
        return self.at >= len(self.messages)

    @property
    def line(self) -> int:
        """The line of the next message (one past the last line at the end)."""
        if self.done:
            return self.messages[-1][0] + 1 if self.messages else 1
        return self.messages[self.at][0]

    def take(self, wanted: str) -> Message:
        if self.done:
            raise _Rejected(self.line, f"the log ends before the run does; expected {wanted}")
        self.at += 1
        return self.messages[self.at - 1]


def _params(
    table: Table, path: Path, n: int, msg: dict[str, Any], given: Mapping[str, int]
) -> dict[str, int]:
    profile = msg.get("profile")
    if profile is not None and profile != table.name:
        raise _Rejected(n, f"the run is of profile {profile!r}, not {table.name!r}")
    logged = msg.get("params", {})
    if not isinstance(logged, dict):
        raise DefinitionError(f'{path}:{n}: "params" must be an object')
    for name, value in given.items():
        if name in logged and logged[name] != value:
            raise DefinitionError(
                f"{path}:{n}: the log's start has {name}={logged[name]}, --param says {value}"
            )
    try:
        return Machine(table, {**logged, **given}).params
    except DefinitionError as exc:
        raise DefinitionError(f"{path}:{n}: {exc}") from None


class _Run:
    """One run of the log, stepped alongside the table by the one run loop (`stepping.Turn`)."""

    def __init__(
        self,
        table: Table,
        path: Path,
        params: dict[str, int],
        log: _Cursor,
        runs: list[Trace],
        judge: Judge,
    ) -> None:
        self.table = table
        self.path = path
        self.turn = _JudgedTurn(Machine(table, params), judge)
        self.log = log
        self.runs = runs

    def follow(self) -> None:
        try:
            self._follow()
        except _Rejected:
            self.runs.append(self.turn.trace())
            raise

    def _step(self, step: Callable[[], object]) -> None:
        try:
            step()
        except RunError as exc:
            raise _Rejected(self.log.line, f"no transition explains the next step: {exc}") from None

    def _follow(self) -> None:
        turn = self.turn
        self._step(turn.begin)
        while turn.pending is not None:
            t, args = turn.pending
            expected = self._expected_call(t, args)
            n, msg = self.log.take(expected)
            request = self._request(n, msg)
            if not isinstance(request, OpRequest) or request.op != t.op or request.args != args:
                raise _Rejected(n, f"expected {expected}, the log has {_describe(msg)}")
            n, reply = self.log.take(f"the host's answer to line {n}")
            if reply["type"] not in ("result", "raise"):
                raise _Rejected(n, f"expected the host's answer to {t.op}, the log has {_describe(reply)}")
            try:
                outcome = message_outcome(reply)
            except (ProtocolError, ValueError) as exc:
                raise DefinitionError(f"{self.path}:{n}: {_first_line(exc)}") from None
            self._step(partial(turn.answer, outcome))
        if turn.terminal == HORIZON:
            raise _Rejected(
                self.log.line,
                f"not decided: limit step_horizon reached ({turn.horizon} host calls without a terminal); "
                "the table says no more about this run",
            )
        n, msg = self.log.take("the end of the run")
        self._check_end(n, msg)
        self.runs.append(turn.trace())

    def _expected_call(self, t: Transition, args: dict[str, Value]) -> str:
        counters = _kv(self.turn.machine.counters(self.turn.state))
        return f"{t.op}({_kv(args)}) (transition {t.id}, after {counters})"

    def _check_end(self, n: int, msg: dict[str, Any]) -> None:
        turn = self.turn
        counters = turn.machine.counters(turn.state)
        ends = f"{turn.state.location} ({_kv(counters)})"
        if turn.violation is not None:
            ends += f" (contract violation: {turn.violation})"
        end = self._request(n, msg)
        if not isinstance(end, End):
            raise _Rejected(n, f"the table ends the run at {ends}, the log has {_describe(msg)}")
        if end.terminal != turn.state.location or end.counters != counters:
            raise _Rejected(
                n, f"the table ends the run at {ends}, the log ends at {end.terminal} ({_kv(end.counters)})"
            )

    def _request(self, n: int, msg: dict[str, Any]) -> Request | None:
        """An op or end message, checked for its shape; None for another kind of message."""
        if msg["type"] not in ("op", "end"):
            return None
        if msg["type"] == "op" and isinstance(msg.get("op"), str) and msg["op"] not in self.table.operations:
            raise _Rejected(n, f"{msg['op']!r} is not an operation of {self.table.name}")
        try:
            return parse_request(msg, self.table)
        except ProtocolError as exc:
            raise DefinitionError(f"{self.path}:{n}: {exc}") from None


def _describe(msg: dict[str, Any]) -> str:
    kind = msg.get("type")
    if kind == "op":
        args = msg.get("args", {})
        return f"{msg.get('op')}({_kv(args) if isinstance(args, dict) else args})"
    if kind == "end":
        counters = msg.get("counters")
        return f"end {msg.get('terminal')} ({_kv(counters) if isinstance(counters, dict) else counters})"
    return f"a {kind} message"


def _kv(values: Mapping[str, Value]) -> str:
    return ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in values.items())


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0]
