"""Concrete reachable states at a few parameter values, from the reference machine.

Only used to discard candidate atoms cheaply: an atom false in a state the machine
really reaches is not an invariant there, so the solver need not refute it. A sample
proves nothing; the strengthening is still checked to be inductive by z3.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping

from turnbound.reference.errors import RunError
from turnbound.reference.machine import Machine, State
from turnbound.reference.monitors import Monitors, MonitorState
from turnbound.reference.table import Table
from turnbound.reference.types import Value

DEFAULT_LIMIT = 2_000


def sample_parameters(table: Table) -> list[dict[str, int]]:
    """The defaults and both corners of the explore ranges (distinct, in that order)."""
    out: list[dict[str, int]] = []
    for params in (
        table.defaults(),
        {p.name: p.range[0] for p in table.parameters},
        {p.name: p.range[1] for p in table.parameters},
    ):
        if params not in out:
            out.append(params)
    return out


def reachable(
    table: Table, params: Mapping[str, int], limit: int = DEFAULT_LIMIT
) -> Iterator[tuple[str, dict[str, Value], MonitorState]]:
    """Breadth first, up to `limit` states: (place, parameters + variables + readable facts, monitors)."""
    machine = Machine(table, params)
    monitors = Monitors(table)
    start = (machine.initial(), monitors.initial())
    seen: set[tuple[State, MonitorState]] = {start}
    queue = deque([start])
    while queue:
        state, ms = queue.popleft()
        yield state.location, machine.env(state), ms
        if machine.is_terminal(state):
            continue
        for nxt in _successors(machine, monitors, state, ms):
            if nxt not in seen and len(seen) < limit:
                seen.add(nxt)
                queue.append(nxt)


def _successors(
    machine: Machine, monitors: Monitors, state: State, ms: MonitorState
) -> list[tuple[State, MonitorState]]:
    try:
        t = machine.select(state)
    except RunError:  # a table loaded without the guard check
        return []
    if t.op is None:
        return [(machine.take_internal(state, t), ms)]
    args = machine.args(state, t)
    out = []
    for outcome in machine.outcomes(t.op):
        out.append((machine.take_outcome(state, t, outcome), monitors.step(ms, t.op, args, outcome)))
    return out
