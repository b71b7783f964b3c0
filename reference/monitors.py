"""Trace properties as small monitors over the sequence of host calls.

A monitor state is a tuple of small integers, one per property, so the explorer can
fold it into its graph nodes and check a trace property on every path, the
interpreter and the Hypothesis machine on the path they walk.
"""

from __future__ import annotations

from collections.abc import Mapping

from turnbound.reference.expr import refs
from turnbound.reference.expr_compile import Compiled, compile_expr
from turnbound.reference.outcomes import Outcome, complete
from turnbound.reference.table import ANY_OP, StepPattern, Table, TraceProperty
from turnbound.reference.trace import Trace
from turnbound.reference.types import Value

MonitorState = tuple[int, ...]

IDLE, ARMED, VIOLATED = 0, 1, 2
"""A `never_after` monitor's states (the z3 encoding's ghost monitors use the same numbers)."""


class Monitors:
    def __init__(self, table: Table) -> None:
        self.table = table
        self.properties = table.trace_properties
        self._when: dict[int, Compiled] = {
            i: compile_expr(p.after.when) for i, p in enumerate(self.properties) if p.after is not None
        }

    def reads_args(self, op: str) -> bool:
        """Whether a step of `op` may depend on its arguments: some pattern's `when` reads a name
        one of them has (a fact of the same name counts too: asking for the arguments then is
        only wasted work)."""
        names = {a for a, _ in self.table.operations[op].args}
        return any(
            r.name in names for p in self.properties if p.after is not None for r in refs(p.after.when)
        )

    def initial(self) -> MonitorState:
        return tuple(0 for _ in self.properties)

    def _matches(
        self, i: int, pattern: StepPattern, op: str, args: Mapping[str, Value], outcome: Outcome
    ) -> bool:
        if pattern.op is not None and pattern.op != op:
            return False
        if (outcome.raise_ or None) != pattern.raise_:
            return False
        env: dict[str, Value] = dict(args)
        if outcome.raise_ is not None:
            env.update(complete(self.table.failures[outcome.raise_].fields, outcome.fields))
        else:
            env.update(complete(self.table.operations[op].facts, outcome.facts or {}))
        return bool(self._when[i](env))

    def step(self, state: MonitorState, op: str, args: Mapping[str, Value], outcome: Outcome) -> MonitorState:
        """The monitors after one host call whose outcome passed the contract."""
        out = []
        for i, (p, s) in enumerate(zip(self.properties, state, strict=True)):
            if p.kind == "at_most":
                out.append(min(s + 1, p.limit + 1) if op == p.op else s)
                continue
            assert p.after is not None
            if s == VIOLATED:
                out.append(s)
                continue
            forbidden = p.forbid == ANY_OP or p.forbid == op
            if s == ARMED and forbidden:
                out.append(VIOLATED)
                continue
            armed = self._matches(i, p.after, op, args, outcome)
            out.append(ARMED if armed or (s == ARMED and p.within == "rest") else IDLE)
        return tuple(out)

    def violated(self, state: MonitorState) -> list[TraceProperty]:
        bad = []
        for p, s in zip(self.properties, state, strict=True):
            if (p.kind == "at_most" and s > p.limit) or (p.kind == "never_after" and s == VIOLATED):
                bad.append(p)
        return bad


def check_trace(table: Table, trace: Trace) -> list[TraceProperty]:
    """The trace properties a finished trace breaks (steps rejected by the contract are skipped)."""
    return replay_monitors(Monitors(table), trace)


def replay_monitors(monitors: Monitors, trace: Trace) -> list[TraceProperty]:
    state = monitors.initial()
    for i, step in enumerate(trace.steps):
        if trace.violation is not None and i == len(trace.steps) - 1:
            break
        state = monitors.step(state, step.op, step.args, step.outcome)
    return monitors.violated(state)
