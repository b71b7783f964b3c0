"""The stepping interface an implementation under test is driven through.

turnbound plays the host: it starts a run, receives the scheduler's host-call
requests one at a time and answers each with an outcome, until the scheduler ends
the run. The reference, an in-process Python scheduler (through a thread bridge)
and a subprocess speaking wire protocol v1 all sit behind this one interface, so
the Hypothesis machine and the conformance runner drive them alike.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from turnbound.reference.errors import RunError, ScriptExhausted, TurnboundError
from turnbound.reference.host import Host
from turnbound.reference.machine import Machine
from turnbound.reference.outcomes import Outcome
from turnbound.reference.stepping import End as End
from turnbound.reference.stepping import OpRequest as OpRequest
from turnbound.reference.stepping import Request as Request
from turnbound.reference.stepping import Turn, positive_limit
from turnbound.reference.table import Table
from turnbound.reference.trace import HORIZON, Trace
from turnbound.reference.types import Value

FAULT_HANG = "hang"
FAULT_EXIT = "exit"
FAULT_PROTOCOL = "protocol"
FAULT_RAISED = "raised"
PROCESS_FAULTS = (FAULT_HANG, FAULT_EXIT, FAULT_PROTOCOL)
"""Faults of the implementation as a whole, not of one case: what a run stops early for."""
BREAKER = 3
"""Runs in a row failing with the same process fault before a runner stops starting new ones."""
SCRIPT_EXHAUSTED = "script"
"""Not a fault of the implementation's: it asked for a host call the case has no answer for."""


class SchedulerFault(RunError):
    """The implementation under test misbehaved (crashed, hung, broke the protocol).

    `kind` says how, so a runner can tell a process that is unusable (hang, exit,
    protocol) from one case that went wrong.
    """

    def __init__(self, message: str, kind: str = FAULT_PROTOCOL) -> None:
        super().__init__(message)
        self.kind = kind


class Scheduler(Protocol):
    """An implementation under test, one run at a time."""

    def start(self, params: Mapping[str, int]) -> Request: ...

    def send(self, outcome: Outcome) -> Request: ...

    def close(self) -> None: ...


class ReferenceScheduler:
    """The reference behind the stepping interface: `stepping.Turn`, with its horizon and limits.

    It is compared by what it sends and how it ends, never by its claims, so its machines
    skip the ghost variables' updates."""

    def __init__(self, table: Table, max_steps: int | None = None) -> None:
        self.table = table
        self.max_steps = None if max_steps is None else positive_limit("max_steps", max_steps)
        self._machines: dict[tuple[tuple[str, int], ...], Machine] = {}
        self._turn: Turn[None] | None = None

    def start(self, params: Mapping[str, int]) -> Request:
        key = tuple(sorted(params.items()))
        machine = self._machines.get(key)
        if machine is None:
            machine = self._machines[key] = Machine(self.table, params, ghosts=False)
        self._turn = Turn(machine, self.max_steps)
        self._turn.begin()
        return self._turn.request

    def send(self, outcome: Outcome) -> Request:
        assert self._turn is not None and self._turn.pending is not None, "no host call is pending"
        self._turn.answer(outcome)
        return self._turn.request

    def close(self) -> None:
        self._turn = None


RunFunction = Callable[[Mapping[str, int], Host], tuple[str, Mapping[str, int]]]
"""A synchronous scheduler: runs one turn against a host, returns (terminal, counters)."""


@dataclass
class _Bridge:
    requests: queue.Queue[Request | BaseException] = field(default_factory=queue.Queue)
    replies: queue.Queue[Outcome | None] = field(default_factory=queue.Queue)


class _BridgeHost:
    def __init__(self, bridge: _Bridge) -> None:
        self.bridge = bridge

    def call(self, op: str, args: Mapping[str, Value]) -> Outcome:
        self.bridge.requests.put(OpRequest(op, dict(args)))
        reply = self.bridge.replies.get()
        if reply is None:
            raise _Cancelled
        return reply


class _Cancelled(BaseException):
    """Unwinds a bridged scheduler thread when the driver stops early."""


MAX_STUCK = 2
"""Abandoned worker threads still running (a scheduler that hangs) before `start` refuses a new run.

A Python thread cannot be killed: without a bound, every run of a hanging scheduler
(every Hypothesis shrink step, say) would leave one more thread behind."""
CLOSE_WAIT = 1.0
"""Seconds `close` waits for an abandoned run to unwind before counting its thread as stuck."""


class ThreadedScheduler:
    """Adapts a synchronous Python scheduler (`RunFunction`) to the stepping interface.

    The scheduler runs in a worker thread; each host call it makes becomes a request
    here, and blocks until `send` answers it.
    """

    def __init__(self, run: RunFunction, timeout: float = 10.0) -> None:
        if not callable(run):
            raise TypeError(
                f"ThreadedScheduler: run must be a function run(params, host), got {type(run).__name__}"
            )
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not 0 < timeout < float("inf")
        ):
            raise ValueError(
                f"ThreadedScheduler: timeout must be a finite number of seconds above 0, got {timeout!r}"
            )
        self.run = run
        self.timeout = timeout
        self._bridge: _Bridge | None = None
        self._thread: threading.Thread | None = None
        self._stuck: list[threading.Thread] = []

    def start(self, params: Mapping[str, int]) -> Request:
        self.close()
        self._stuck = [t for t in self._stuck if t.is_alive()]
        if len(self._stuck) >= MAX_STUCK:
            raise SchedulerFault(
                f"the implementation still hangs in {len(self._stuck)} earlier runs; no new run is started",
                FAULT_HANG,
            )
        bridge = self._bridge = _Bridge()

        def work() -> None:
            try:
                terminal, counters = self.run(dict(params), _BridgeHost(bridge))
                bridge.requests.put(End(terminal, dict(counters)))
            except _Cancelled:
                pass
            except BaseException as exc:  # reported to the driver as a fault
                bridge.requests.put(exc)

        self._thread = threading.Thread(target=work, daemon=True)
        self._thread.start()
        return self._next()

    def _next(self) -> Request:
        assert self._bridge is not None
        try:
            item = self._bridge.requests.get(timeout=self.timeout)
        except queue.Empty:
            raise SchedulerFault(
                f"no request or end within {self.timeout:g}s (the implementation hangs)", FAULT_HANG
            ) from None
        if isinstance(item, BaseException):
            raise SchedulerFault(
                f"the implementation raised {type(item).__name__}: {item}", FAULT_RAISED
            ) from None
        return item

    def send(self, outcome: Outcome) -> Request:
        assert self._bridge is not None
        self._bridge.replies.put(outcome)
        return self._next()

    def close(self) -> None:
        thread = self._thread
        if self._bridge is not None and thread is not None and thread.is_alive():
            self._bridge.replies.put(None)
            thread.join(timeout=min(self.timeout, CLOSE_WAIT))
            if thread.is_alive():
                self._stuck.append(thread)
        self._bridge = None
        self._thread = None


@dataclass(frozen=True)
class Observed:
    """What an implementation did in one run: its host calls, the answers, how it ended."""

    calls: tuple[tuple[str, dict[str, Value], Outcome | None], ...]
    """Each host call with its answer; None if the host had no answer for it."""
    end: End | None
    fault: str | None = None
    fault_kind: str | None = None
    """A `SchedulerFault`'s kind, or SCRIPT_EXHAUSTED."""


def drive(
    scheduler: Scheduler,
    params: Mapping[str, int],
    host: Host,
    max_calls: int = 10_000,
    horizon: int | None = None,
) -> Observed:
    """Run one turn of `scheduler`, answering its host calls from `host`.

    With `horizon`, a turn still asking for a host call after that many is cut off there
    and observed as ending at `horizon`, as the reference's own turn is (`stepping.Turn`).
    """
    calls: list[tuple[str, dict[str, Value], Outcome | None]] = []
    try:
        request = scheduler.start(params)
        while isinstance(request, OpRequest):
            if horizon is not None and len(calls) >= horizon:
                return Observed(tuple(calls), End(HORIZON, {}))
            if len(calls) >= max_calls:
                return Observed(tuple(calls), None, f"more than {max_calls} host calls")
            calls.append((request.op, request.args, None))
            outcome = host.call(request.op, request.args)
            calls[-1] = (request.op, request.args, outcome)
            request = scheduler.send(outcome)
    except SchedulerFault as exc:
        return Observed(tuple(calls), None, str(exc), exc.kind)
    except ScriptExhausted as exc:
        return Observed(tuple(calls), None, str(exc), SCRIPT_EXHAUSTED)
    except TurnboundError as exc:
        return Observed(tuple(calls), None, str(exc))
    return Observed(tuple(calls), request)


def first_divergence(expected: Trace, observed: Observed) -> str | None:
    """The first way `observed` differs from the reference's trace, as one line; None if none.

    Worded for the implementer: a call the reference does not make at that point is told as
    what the implementation did, never as a gap in the case's host script.
    """
    for i, step in enumerate(expected.steps):
        if i >= len(observed.calls):
            got = f"a fault ({observed.fault})" if observed.fault else f"end {_end(observed.end)}"
            return f"step {i + 1}: expected {step.op}({_kv(step.args)}), observed {got}"
        op, args, _ = observed.calls[i]
        if op != step.op or args != step.args:
            return (
                f"step {i + 1}: the implementation called {op}({_kv(args)}) "
                f"where the reference calls {step.op}({_kv(step.args)})"
            )
    if len(observed.calls) > len(expected.steps):
        n = len(expected.steps) + 1
        op, args, _ = observed.calls[n - 1]
        return (
            f"step {n}: the implementation called {op}({_kv(args)}) "
            f"where the reference ends at {expected.terminal}"
        )
    if observed.fault:
        n = len(observed.calls)
        return f"after step {n}: expected end {expected.terminal}, observed a fault ({observed.fault})"
    assert observed.end is not None
    if observed.end.terminal != expected.terminal:
        return f"end: expected terminal {expected.terminal}, observed {observed.end.terminal}"
    if expected.terminal == HORIZON:
        return None  # both cut off at the step horizon: an unfinished turn reports no counters
    if observed.end.counters != expected.counters:
        return f"end: expected counters {_kv(expected.counters)}, observed {_kv(observed.end.counters)}"
    return None


def _kv(values: Mapping[str, Value]) -> str:
    return fmt_values(values)


def fmt_values(values: Mapping[str, Value]) -> str:
    """`name=value, ...` on one line, whatever the implementation put in the names and values."""
    return ", ".join(f"{_printable(k)}={_fmt_value(v)}" for k, v in values.items())


def _fmt_value(value: Value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return _printable(value) if isinstance(value, str) else str(value)


def _printable(text: str) -> str:
    """Text as it is, or quoted with escapes if it holds a newline or another unprintable character."""
    return text if text.isprintable() else json.dumps(text)


def _end(end: End | None) -> str:
    return "nothing" if end is None else f"{end.terminal} ({_kv(end.counters)})"
