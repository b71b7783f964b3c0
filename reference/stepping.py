"""One step and one run of a table: the loop every engine drives.

`Machine` holds the small-step semantics (select, take an internal transition, take a
host call's outcome); a `Turn` is one run of it, asked for its next request and given
an answer, with the single policy every driver shares:

- the step horizon: after `horizon` host calls a turn that has not ended is cut off at
  `horizon` (not a terminal), before any further internal transition;
- livelock: internal transitions between two host calls that come back to a state, or
  more than `MAX_INTERNAL` of them in a row, raise `Livelock`;
- contract violations: an outcome its operation's contract rejects ends the turn at the
  built-in terminal `contract_violation`, with the reason in `violation`;
- abort: `cut()` ends a turn that still asks for host calls at `horizon`;
- failures: a stuck or nondeterministic state, a livelock or an integer beyond the
  machine's limit is a `RunError`, handed to `on_error` (which raises it by default).

Engines that judge claims while stepping (the Hypothesis machine) override the hooks
`on_state`, `on_call` and `on_terminal`; the first non-None result stops the turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel
from turnbound.reference.errors import Livelock, RunError
from turnbound.reference.host import Host
from turnbound.reference.machine import Machine, State
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import CONTRACT_VIOLATION, Table, Transition
from turnbound.reference.trace import HORIZON, Step, Trace
from turnbound.reference.types import Value

DEFAULT_MAX_STEPS = 10_000
"""Host calls in one turn when neither the caller nor the table (`step_horizon`) says otherwise."""
MAX_INTERNAL = 10_000
"""Internal transitions allowed between two host calls before the run is a livelock."""


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


def positive_limit(name: str, value: object) -> int:
    """A limit given through the Python API: a positive integer, or a ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def step_limit(table: Table, max_steps: int | None = None) -> int:
    """Host calls a turn may make: the caller's limit, else the table's horizon, else the default."""
    if max_steps is not None:
        return positive_limit("max_steps", max_steps)
    return table.step_horizon or DEFAULT_MAX_STEPS


F = TypeVar("F")

_STEP_FIELDS = set(Step.model_fields)
"""Every step's fields set, one set shared by all: a step sets every field and is frozen, and
pydantic only ever adds a field's name to it (or copies it first), so it never changes."""
_new_step = Step.__new__
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
"""The model's slots, set through their descriptors (what `object.__setattr__` finds first)."""


def trusted_step(
    op: str, args: dict[str, Value], outcome: Outcome, counters: dict[str, int], transition: str
) -> Step:
    """`Step.model_construct` for values the machine made itself, without its per-field loop
    (every field is given, the model has no aliases, extras or private attributes): a step
    record is built once per host call, the hottest allocation of a run."""
    step = _new_step(Step)
    _set_dict(
        step, {"op": op, "args": args, "outcome": outcome, "counters": counters, "transition": transition}
    )
    _set_fields_set(step, _STEP_FIELDS)
    _set_extra(step, None)
    _set_private(step, None)
    return step


class Turn(Generic[F]):
    """One run of a machine, advanced one host call at a time."""

    def __init__(self, machine: Machine, max_steps: int | None = None) -> None:
        self.machine = machine
        self.horizon = step_limit(machine.table, max_steps)
        self.state = machine.initial()
        self.steps: list[Step] = []
        self.path: list[str] = []
        """Every transition taken, internal ones included."""
        self.pending: tuple[Transition, dict[str, Value]] | None = None
        self.terminal: str | None = None
        self.violation: str | None = None
        self._entered: tuple[bool, str] | None = None
        """How the current state was entered: (by a host call?, transition); None: the initial state."""
        cls = type(self)
        self._hooked = cls.on_state is not Turn.on_state or cls.on_call is not Turn.on_call
        """False: `on_state` and `on_call` are the defaults (None), so the step does not call them."""
        kind = type(machine)
        self._terminals = machine.table.terminals if kind.is_terminal is Machine.is_terminal else None
        """The terminal locations, read directly unless the machine decides what ends a turn."""
        self._counters = machine.counters_of if kind.counters is Machine.counters else None
        """The counters from the values, called directly unless the machine decides them."""

    def where(self) -> str:
        """The current point of the turn, for messages."""
        if self._entered is None:
            return "in the initial state"
        by_call, tid = self._entered
        if by_call:
            return f"after step {len(self.steps)} ({tid})"
        return f"after internal transition {tid} (following step {len(self.steps)})"

    # -- hooks -------------------------------------------------------------

    def on_state(self) -> F | None:
        """Called on the initial state and on every state the turn enters (`where()` says which)."""
        return None

    def on_call(self, step: Step) -> F | None:
        """Called after a host call whose outcome the contract accepted, before `on_state`."""
        return None

    def on_terminal(self) -> F | None:
        """Called when the turn reaches one of the table's own terminals."""
        return None

    def on_error(self, error: RunError) -> F | None:
        raise error

    # -- stepping ------------------------------------------------------------

    def begin(self) -> F | None:
        """Judge the initial state and advance to the first host call (or the end)."""
        return self.on_state() or self.advance()

    @property
    def request(self) -> Request:
        if self.pending is not None:
            return OpRequest(self.pending[0].op or "", dict(self.pending[1]))
        return End(self.terminal or self.state.location, self.machine.counters(self.state))

    @property
    def ended(self) -> bool:
        return self.pending is None and self.terminal is not None

    def advance(self) -> F | None:
        """Take internal transitions up to the next host call, the end or the horizon."""
        try:
            return self._advance()
        except RunError as exc:
            return self.on_error(exc)

    def _advance(self) -> F | None:
        m = self.machine
        first: State | None = None
        seen: set[State] | None = None
        """The states internal transitions left since the last host call: made at the second one
        (the usual single internal transition never hashes its state)."""
        internal = 0
        path = self.path
        state = self.state
        hooked = self._hooked
        terminals = self._terminals
        steps, horizon = self.steps, self.horizon
        while not (state[0] in terminals if terminals is not None else m.is_terminal(state)):
            if len(steps) >= horizon:
                self.terminal = HORIZON
                return None
            t = m.select(state)
            path.append(t.id)
            if t.op is not None:
                self.pending = (t, m.args(state, t))
                return None
            if first is None:
                first = state
            else:
                if seen is None:
                    seen = {first}
                if state in seen:
                    raise Livelock(state.location, internal, path[-internal - 1 :], repeats=True)
                seen.add(state)
            if internal >= MAX_INTERNAL:
                raise Livelock(state.location, internal, path[-4:])
            internal += 1
            state = self.state = m.take_internal(state, t)
            self._entered = (False, t.id)
            if hooked:
                found = self.on_state()
                if found is not None:
                    return found
                state = self.state  # a hook may have moved the turn on
        self.terminal = state.location
        return self.on_terminal()

    def answer(self, outcome: Outcome) -> F | None:
        """Give the pending host call its outcome and advance to the next request."""
        pending = self.pending
        assert pending is not None, "no host call is pending"
        t, args = pending
        m = self.machine
        self.pending = None
        try:
            violation, state = m.answered(self.state, t, outcome)
            self.state = state
            counters = self._counters
            counted = m.counters(state) if counters is None else counters(state[1])
            step = trusted_step(t.op or "", args, outcome, counted, t.id)
            self.steps.append(step)
            self._entered = (True, t.id)
            if violation is not None:
                self.violation, self.terminal = violation, CONTRACT_VIOLATION
                return self.on_state()
            if self._hooked:
                return self.on_call(step) or self.on_state() or self._advance()
            return self._advance()
        except RunError as exc:
            return self.on_error(exc)

    def cut(self) -> None:
        """Abort a turn that still asks for host calls: it ends at `horizon`."""
        self.pending = None
        self.terminal = HORIZON

    def trace(self) -> Trace:
        """What the turn did so far (a host call still pending is not part of it)."""
        m = self.machine
        path = self.path[:-1] if self.pending is not None else self.path
        return Trace(
            profile=m.table.name,
            params=dict(m.params),
            steps=list(self.steps),
            terminal=self.terminal or self.state.location,
            counters=m.counters(self.state),
            variables=m.variables(self.state),
            path=list(path),
            violation=self.violation,
        )


def drive_turn(turn: Turn[F], host: Host) -> Trace:
    """Drive a turn to its end with `host` answering every call."""
    turn.begin()
    while turn.pending is not None:
        t, args = turn.pending
        turn.answer(host.call(t.op or "", args))
    return turn.trace()


class RecordedTurn(Turn[None]):
    """A turn that keeps every state it enters, with the transition that led there (`init` first)."""

    def __init__(self, machine: Machine, max_steps: int | None = None) -> None:
        super().__init__(machine, max_steps)
        self.visited: list[tuple[str, State]] = []

    def on_state(self) -> None:
        self.visited.append((self.path[-1] if self.path else "init", self.state))


def retrace(machine: Machine, trace: Trace) -> RecordedTurn:
    """Take a recorded trace's run again, step by step, keeping every state it passes through.

    The trace's outcomes answer the host calls in order; the turn stops where the trace
    stops (its end, its horizon, or the call it did not answer). A trace this machine
    does not take the same way is a `RunError` naming where the paths part.
    """
    horizon = len(trace.steps) if trace.terminal == HORIZON and trace.steps else None
    turn = RecordedTurn(machine, horizon)
    outcomes = iter(trace.steps)
    turn.begin()
    while turn.pending is not None:
        step = next(outcomes, None)
        if step is None:
            break
        turn.answer(step.outcome)
    taken = turn.path[:-1] if turn.pending is not None else turn.path
    if taken != trace.path:
        raise RunError(
            f"{machine.table.name}: the trace does not replay: it took {trace.path}, the table takes {taken}"
        )
    return turn


def probe_run(table: Table) -> Trace:
    """The simplest turn at the default parameters, each host call answered with its operation's
    first outcome: an engine that never runs the table (the prover) asks it whether the reference
    can run at all; a livelock or a stuck state is raised as the run's `RunError`."""
    turn: Turn[None] = Turn(Machine(table))
    turn.begin()
    while turn.pending is not None:
        turn.answer(turn.machine.outcomes(turn.pending[0].op or "")[0])
    return turn.trace()
