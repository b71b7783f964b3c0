"""The one place a table's claims are judged on concrete states and traces.

Invariants and lemmas are judged on every state (a step claim is the invariant its
ghost compiles to); bounds only at the table's own terminals, or those a bound names
in `at` (never at `contract_violation`, where the host broke its contract, nor at
`horizon`, where the run was cut off); trace properties by the monitors after every
host call the contract accepted. The explorer, the Hypothesis machine, witness replay
and the conformance checks of an implementation's reported end all ask this module.
"""

from __future__ import annotations

from collections.abc import Mapping

from turnbound.reference.expr import Expr, Ref, render, walk
from turnbound.reference.expr_compile import Compiled, compile_expr
from turnbound.reference.monitors import Monitors, MonitorState, replay_monitors
from turnbound.reference.table import Claim, Table, TraceProperty
from turnbound.reference.trace import Trace
from turnbound.reference.types import Value


def ordered_refs(expr: Expr) -> list[str]:
    """The names an expression reads, in reading order (for stable messages)."""
    seen: dict[str, None] = {}
    for node in walk(expr):
        if isinstance(node, Ref):
            seen.setdefault(node.name, None)
    return list(seen)


def fmt_value(value: Value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


class Judge:
    """A table's claims compiled once."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.invariants: tuple[tuple[Claim, Compiled], ...] = tuple(
            (c, compile_expr(c.expr)) for c in (*table.invariants, *table.lemmas)
        )
        """Invariants, then lemmas: judged on every state."""
        self.bounds: tuple[tuple[Claim, Compiled], ...] = tuple(
            (c, compile_expr(c.expr)) for c in table.bounds
        )
        """Judged at the table's own terminals only."""
        visible = {p.name for p in table.parameters} | set(table.counters)
        self.counter_bounds = tuple((c, fn) for c, fn in self.bounds if set(ordered_refs(c.expr)) <= visible)
        """Bounds over parameters and counters only: judged on what an implementation reports."""
        self.monitors = Monitors(table)

    def judges_bounds(self, location: str) -> bool:
        return location in self.table.terminals

    def broken_invariants(self, env: Mapping[str, Value]) -> list[Claim]:
        return [c for c, holds in self.invariants if not holds(env)]

    def broken_bounds(self, location: str, env: Mapping[str, Value]) -> list[Claim]:
        if not self.judges_bounds(location):
            return []
        return [c for c, holds in self.bounds if c.judged_at(location) and not holds(env)]

    def broken_counter_bounds(self, terminal: str, env: Mapping[str, Value]) -> list[Claim]:
        """Bounds an implementation's reported end breaks (those it reports enough to judge)."""
        if not self.judges_bounds(terminal):
            return []
        return [
            c
            for c, holds in self.counter_bounds
            if c.judged_at(terminal) and all(n in env for n in ordered_refs(c.expr)) and not holds(env)
        ]

    def broken_properties(self, monitors: MonitorState) -> list[TraceProperty]:
        return self.monitors.violated(monitors)

    def broken_by_trace(self, trace: Trace) -> list[TraceProperty]:
        """The trace properties a finished trace breaks (a step the contract rejected is skipped)."""
        return replay_monitors(self.monitors, trace)

    def claim_message(self, claim: Claim, env: Mapping[str, Value], where: str) -> str:
        if claim.step is not None:
            return f"step claim {claim.name} is false {where}: {claim.text}"
        values = ", ".join(f"{n}={fmt_value(env[n])}" for n in ordered_refs(claim.expr) if n in env)
        return f"{claim.kind} {claim.name} is false {where}: {render(claim.expr)} with {values}"
