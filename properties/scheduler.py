"""The stepping interface an implementation under test is driven through.

turnbound plays the host: it starts a run, receives the scheduler's host-call
requests one at a time and answers each with an outcome, until the scheduler ends
the run. The reference, an in-process Python scheduler (through a thread bridge)
and a subprocess speaking wire protocol v1 all sit behind this one interface, so
the Hypothesis machine and the conformance runner drive them alike.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from turnbound.reference.errors import Livelock, RunError, TurnboundError
from turnbound.reference.host import Host
from turnbound.reference.interpreter import MAX_INTERNAL
from turnbound.reference.machine import Machine, State
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Table
from turnbound.reference.trace import HORIZON, Trace
from turnbound.reference.types import Value


@dataclass(frozen=True)
class OpRequest:
    """The scheduler asks the host to perform `op` with `args`."""

    op: str
    args: dict[str, Value]


@dataclass(frozen=True)
class End:
    """The scheduler finished the run."""

    terminal: str
    counters: dict[str, int]


Request = OpRequest | End


class SchedulerFault(RunError):
    """The implementation under test misbehaved (crashed, hung, broke the protocol)."""


class Scheduler(Protocol):
    """An implementation under test, one run at a time."""

    def start(self, params: Mapping[str, int]) -> Request: ...

    def send(self, outcome: Outcome) -> Request: ...

    def close(self) -> None: ...


class ReferenceScheduler:
    """The reference interpreter behind the stepping interface."""

    def __init__(self, table: Table, max_steps: int = 10_000) -> None:
        self.table = table
        self.max_steps = max_steps
        self._machine: Machine | None = None
        self._state: State | None = None
        self._pending: tuple[object, dict[str, Value]] | None = None
        self._steps = 0

    def start(self, params: Mapping[str, int]) -> Request:
        self._machine = Machine(self.table, params)
        self._state = self._machine.initial()
        self._steps = 0
        return self._advance()

    def _advance(self) -> Request:
        m, state = self._machine, self._state
        assert m is not None and state is not None
        internal = 0
        while not m.is_terminal(state):
            if self._steps >= self.max_steps:
                self._state = state
                return End(HORIZON, m.counters(state))
            t = m.select(state)
            if t.op is None:
                internal += 1
                if internal > MAX_INTERNAL:
                    raise Livelock(state.location, internal - 1, [t.id])
                state = m.take_internal(state, t)
                continue
            self._state = state
            args = m.args(state, t)
            self._pending = (t, args)
            return OpRequest(t.op, args)
        self._state = state
        return End(state.location, m.counters(state))

    def send(self, outcome: Outcome) -> Request:
        m, state, pending = self._machine, self._state, self._pending
        assert m is not None and state is not None and pending is not None
        t = pending[0]
        self._pending = None
        self._steps += 1
        if m.violation(t, outcome):  # type: ignore[arg-type]
            self._state = m.contract_state(state)
            return End(self._state.location, m.counters(self._state))
        self._state = m.take_outcome(state, t, outcome)  # type: ignore[arg-type]
        return self._advance()

    def close(self) -> None:
        self._machine = self._state = self._pending = None


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

    def start(self, params: Mapping[str, int]) -> Request:
        self.close()
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
            raise SchedulerFault(f"no request or end within {self.timeout:g}s") from None
        if isinstance(item, BaseException):
            raise SchedulerFault(f"scheduler raised {type(item).__name__}: {item}") from None
        return item

    def send(self, outcome: Outcome) -> Request:
        assert self._bridge is not None
        self._bridge.replies.put(outcome)
        return self._next()

    def close(self) -> None:
        if self._bridge is not None and self._thread is not None and self._thread.is_alive():
            self._bridge.replies.put(None)
            self._thread.join(timeout=self.timeout)
        self._bridge = None
        self._thread = None


@dataclass(frozen=True)
class Observed:
    """What an implementation did in one run: its host calls, the answers, how it ended."""

    calls: tuple[tuple[str, dict[str, Value], Outcome | None], ...]
    """Each host call with its answer; None if the host had no answer for it."""
    end: End | None
    fault: str | None = None


def drive(scheduler: Scheduler, params: Mapping[str, int], host: Host, max_calls: int = 10_000) -> Observed:
    """Run one turn of `scheduler`, answering its host calls from `host`."""
    calls: list[tuple[str, dict[str, Value], Outcome | None]] = []
    try:
        request = scheduler.start(params)
        while isinstance(request, OpRequest):
            if len(calls) >= max_calls:
                return Observed(tuple(calls), None, f"more than {max_calls} host calls")
            calls.append((request.op, request.args, None))
            outcome = host.call(request.op, request.args)
            calls[-1] = (request.op, request.args, outcome)
            request = scheduler.send(outcome)
    except SchedulerFault as exc:
        return Observed(tuple(calls), None, str(exc))
    except TurnboundError as exc:
        return Observed(tuple(calls), None, str(exc))
    return Observed(tuple(calls), request)


def first_divergence(expected: Trace, observed: Observed) -> str | None:
    """The first way `observed` differs from the reference's trace, as one line; None if none."""
    for i, step in enumerate(expected.steps):
        if i >= len(observed.calls):
            got = f"a fault ({observed.fault})" if observed.fault else f"end {_end(observed.end)}"
            return f"step {i + 1}: expected {step.op}({_kv(step.args)}), observed {got}"
        op, args, _ = observed.calls[i]
        if op != step.op or args != step.args:
            return f"step {i + 1}: expected {step.op}({_kv(step.args)}), observed {op}({_kv(args)})"
    if len(observed.calls) > len(expected.steps):
        op, args, _ = observed.calls[len(expected.steps)]
        return f"step {len(expected.steps) + 1}: expected end {expected.terminal}, observed {op}({_kv(args)})"
    if observed.fault:
        n = len(observed.calls)
        return f"after step {n}: expected end {expected.terminal}, observed a fault ({observed.fault})"
    assert observed.end is not None
    if observed.end.terminal != expected.terminal:
        return f"end: expected terminal {expected.terminal}, observed {observed.end.terminal}"
    if observed.end.counters != expected.counters:
        return f"end: expected counters {_kv(expected.counters)}, observed {_kv(observed.end.counters)}"
    return None


def _kv(values: Mapping[str, Value]) -> str:
    return ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in values.items())


def _end(end: End | None) -> str:
    return "nothing" if end is None else f"{end.terminal} ({_kv(end.counters)})"
