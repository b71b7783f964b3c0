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

from turnbound.reference.errors import RunError, TurnboundError
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


class SchedulerFault(RunError):
    """The implementation under test misbehaved (crashed, hung, broke the protocol)."""


class Scheduler(Protocol):
    """An implementation under test, one run at a time."""

    def start(self, params: Mapping[str, int]) -> Request: ...

    def send(self, outcome: Outcome) -> Request: ...

    def close(self) -> None: ...


class ReferenceScheduler:
    """The reference behind the stepping interface: `stepping.Turn`, with its horizon and limits."""

    def __init__(self, table: Table, max_steps: int | None = None) -> None:
        self.table = table
        self.max_steps = None if max_steps is None else positive_limit("max_steps", max_steps)
        self._machines: dict[tuple[tuple[str, int], ...], Machine] = {}
        self._turn: Turn[None] | None = None

    def start(self, params: Mapping[str, int]) -> Request:
        key = tuple(sorted(params.items()))
        machine = self._machines.get(key)
        if machine is None:
            machine = self._machines[key] = Machine(self.table, params)
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


class ThreadedScheduler:
    """Adapts a synchronous Python scheduler (`RunFunction`) to the stepping interface.

    The scheduler runs in a worker thread; each host call it makes becomes a request
    here, and blocks until `send` answers it.
    """

    def __init__(self, run: RunFunction, timeout: float = 10.0) -> None:
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
    if expected.terminal == HORIZON:
        return None  # both cut off at the step horizon: an unfinished turn reports no counters
    if observed.end.counters != expected.counters:
        return f"end: expected counters {_kv(expected.counters)}, observed {_kv(observed.end.counters)}"
    return None


def _kv(values: Mapping[str, Value]) -> str:
    return ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in values.items())


def _end(end: End | None) -> str:
    return "nothing" if end is None else f"{end.terminal} ({_kv(end.counters)})"
