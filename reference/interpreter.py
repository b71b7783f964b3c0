"""The reference implementation: run one table against a host and record the trace."""

from __future__ import annotations

from collections.abc import Mapping

from turnbound.reference.arguments import require_host, require_params, require_table
from turnbound.reference.host import Host
from turnbound.reference.machine import Machine
from turnbound.reference.outcomes import Outcome
from turnbound.reference.stepping import DEFAULT_MAX_STEPS, MAX_INTERNAL, Turn, drive_turn
from turnbound.reference.table import Table
from turnbound.reference.trace import Trace

__all__ = ["DEFAULT_MAX_STEPS", "MAX_INTERNAL", "outcome_script", "run"]


def run(
    table: Table | Machine,
    host: Host,
    params: Mapping[str, int] | None = None,
    max_steps: int | None = None,
    ghosts: bool = True,
) -> Trace:
    """Run to a terminal (or to the step limit, reported as terminal `horizon`).

    Every outcome is checked against its operation's contract before it is used;
    a violation ends the run at the built-in terminal `contract_violation`. The
    stepping and its limits are `turnbound.reference.stepping.Turn`'s. With `ghosts=False`
    the claims' ghost variables are neither updated nor in the trace (`Machine`).
    """
    if not isinstance(table, Machine):
        require_table(table, "run")
    require_host(host, "run")
    require_params(params, "run")
    machine = table if isinstance(table, Machine) else Machine(table, params, ghosts)
    return drive_turn(Turn[None](machine, max_steps), host)


def outcome_script(trace: Trace) -> dict[str, list[Outcome]]:
    """The host script that replays a trace: each operation's outcomes in call order."""
    script: dict[str, list[Outcome]] = {}
    for step in trace.steps:
        script.setdefault(step.op, []).append(step.outcome)
    return script
