"""The reference implementation: run one table against a host and record the trace."""

from __future__ import annotations

from collections.abc import Mapping

from turnbound.reference.host import Host
from turnbound.reference.machine import Machine
from turnbound.reference.outcomes import Outcome
from turnbound.reference.stepping import DEFAULT_MAX_STEPS, MAX_INTERNAL, Turn, run_turn
from turnbound.reference.table import Table
from turnbound.reference.trace import Trace

__all__ = ["DEFAULT_MAX_STEPS", "MAX_INTERNAL", "outcome_script", "run"]


def run(
    table: Table | Machine,
    host: Host,
    params: Mapping[str, int] | None = None,
    max_steps: int | None = None,
) -> Trace:
    """Run to a terminal (or to the step limit, reported as terminal `horizon`).

    Every outcome is checked against its operation's contract before it is used;
    a violation ends the run at the built-in terminal `contract_violation`. The
    stepping and its limits are `turnbound.reference.stepping.Turn`'s.
    """
    if not isinstance(table, Table | Machine):
        raise TypeError(f"run() needs a Table or a Machine, got {type(table).__name__}")
    if not callable(getattr(host, "call", None)):
        raise TypeError(f"run() needs a host with a call(op, args) method, got {type(host).__name__}")
    machine = table if isinstance(table, Machine) else Machine(table, params)
    return run_turn(Turn[None](machine, max_steps), host)


def outcome_script(trace: Trace) -> dict[str, list[Outcome]]:
    """The host script that replays a trace: each operation's outcomes in call order."""
    script: dict[str, list[Outcome]] = {}
    for step in trace.steps:
        script.setdefault(step.op, []).append(step.outcome)
    return script
