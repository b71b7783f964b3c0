"""Replaying a path of the explorer's graph on the interpreter (`interpreter.run`).

A path's host outcomes become a host script; the interpreter runs it and stops where
the path ends, so every witness the explorer reports is the interpreter's own run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from turnbound.properties.explore.results import PathStep
from turnbound.reference.errors import RunError, ScriptExhausted
from turnbound.reference.host import Script, ScriptHost
from turnbound.reference.interpreter import run
from turnbound.reference.machine import Machine, State
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Table, Transition
from turnbound.reference.trace import HORIZON, Trace


class _ReplayMachine(Machine):
    """The interpreter's machine, recording each state it enters and ending the run after
    `stop` transitions, so a witness that ends mid-run replays to exactly its last state."""

    def __init__(self, table: Table, params: Mapping[str, int], stop: int) -> None:
        super().__init__(table, params)
        self.stop = stop
        self.visited: list[State] = []

    @classmethod
    def like(cls, machine: Machine, stop: int) -> _ReplayMachine:
        """A replay machine sharing `machine`'s compiled table (compiling is the costly part)."""
        clone = cls.__new__(cls)
        clone.__dict__.update(machine.__dict__)
        clone.stop = stop
        clone.visited = []
        return clone

    def _enter(self, state: State) -> State:
        self.visited.append(state)
        return state

    def initial(self) -> State:
        return self._enter(super().initial())

    def take_internal(self, state: State, t: Transition) -> State:
        return self._enter(super().take_internal(state, t))

    def take_outcome(self, state: State, t: Transition, outcome: Outcome) -> State:
        return self._enter(super().take_outcome(state, t, outcome))

    def contract_state(self, state: State) -> State:
        return self._enter(super().contract_state(state))

    def is_terminal(self, state: State) -> bool:
        return super().is_terminal(state) or len(self.visited) > self.stop


@dataclass(frozen=True)
class Replay:
    """What the interpreter did with a path's host script."""

    script: dict[str, list[Outcome]]
    trace: Trace
    visited: tuple[State, ...]
    """Every state the interpreter entered, the initial one first."""


def path_script(path: Iterable[PathStep]) -> dict[str, list[Outcome]]:
    """The host script of a path: each operation's outcomes in call order."""
    script: dict[str, list[Outcome]] = {}
    for step in path:
        if step.op is not None and step.outcome is not None:
            script.setdefault(step.op, []).append(step.outcome)
    return script


def replay(table: Table | Machine, params: Mapping[str, int] | None, path: Iterable[PathStep]) -> Replay:
    """Run the interpreter on the path's host script, stopping where the path ends.

    The trace of a path that ends before a terminal has terminal `horizon` (cut off).
    """
    steps = list(path)
    script = path_script(steps)
    if isinstance(table, Machine):
        machine = _ReplayMachine.like(table, len(steps))
    else:
        machine = _ReplayMachine(table, params or {}, len(steps))
    trace = run(machine, ScriptHost(Script.model_validate(script)))
    if not machine.table.is_terminal(trace.terminal) and trace.terminal != HORIZON:
        trace = trace.model_copy(update={"terminal": HORIZON})
    return Replay(script, trace, tuple(machine.visited))


def _run_error(machine: Machine, path: list[PathStep]) -> RunError | None:
    """The error the interpreter raises one step after the path (a stuck or nondeterministic state)."""
    replaying = _ReplayMachine.like(machine, len(path) + 1)
    try:
        run(replaying, ScriptHost(Script.model_validate(path_script(path))))
    except ScriptExhausted:
        return None
    except RunError as exc:
        return exc
    return None
