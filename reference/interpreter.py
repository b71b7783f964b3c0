"""The reference implementation: run one table against a host and record the trace."""

from __future__ import annotations

from collections.abc import Mapping

from turnbound.reference.arguments import require_host, require_params, require_table
from turnbound.reference.errors import Livelock
from turnbound.reference.host import Host
from turnbound.reference.machine import Machine, State
from turnbound.reference.outcomes import Outcome
from turnbound.reference.table import Table
from turnbound.reference.trace import HORIZON, Step, Trace

DEFAULT_MAX_STEPS = 10_000
MAX_INTERNAL = 10_000
"""Internal transitions allowed between two host calls before the run is a livelock."""


def run(
    table: Table | Machine,
    host: Host,
    params: Mapping[str, int] | None = None,
    max_steps: int | None = None,
) -> Trace:
    """Run to a terminal (or to the step limit, reported as terminal `horizon`).

    Every outcome is checked against its operation's contract before it is used;
    a violation ends the run at the built-in terminal `contract_violation`.
    """
    if not isinstance(table, Machine):
        require_table(table, "run")
    require_host(host, "run")
    require_params(params, "run")
    machine = table if isinstance(table, Machine) else Machine(table, params)
    limit = max_steps or machine.table.step_horizon or DEFAULT_MAX_STEPS
    state = machine.initial()
    steps: list[Step] = []
    path: list[str] = []
    violation: str | None = None
    internal = 0
    while not machine.is_terminal(state):
        if len(steps) >= limit:
            return _trace(machine, state, steps, path, None, terminal=HORIZON)
        t = machine.select(state)
        path.append(t.id)
        if t.op is None:
            internal += 1
            if internal > MAX_INTERNAL:
                raise Livelock(state.location, internal - 1, path[-4:])
            state = machine.take_internal(state, t)
            continue
        internal = 0
        args = machine.args(state, t)
        outcome = host.call(t.op, args)
        violation = machine.violation(t, outcome)
        state = machine.contract_state(state) if violation else machine.take_outcome(state, t, outcome)
        steps.append(
            Step(op=t.op, args=args, outcome=outcome, counters=machine.counters(state), transition=t.id)
        )
        if violation:
            break
    return _trace(machine, state, steps, path, violation)


def _trace(
    machine: Machine,
    state: State,
    steps: list[Step],
    path: list[str],
    violation: str | None,
    terminal: str | None = None,
) -> Trace:
    return Trace(
        profile=machine.table.name,
        params=dict(machine.params),
        steps=steps,
        terminal=terminal or state.location,
        counters=machine.counters(state),
        variables=machine.variables(state),
        path=path,
        violation=violation,
    )


def outcome_script(trace: Trace) -> dict[str, list[Outcome]]:
    """The host script that replays a trace: each operation's outcomes in call order."""
    script: dict[str, list[Outcome]] = {}
    for step in trace.steps:
        script.setdefault(step.op, []).append(step.outcome)
    return script
