"""What each claim of a table says about one state, for the prover and its witnesses.

Invariants and lemmas hold in every reachable state; a bound holds in every reachable
terminal state; a trace property is its ghost monitor never reporting a violation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import z3
from turnbound.properties.prove.encoding import Encoding, Frame
from turnbound.reference.expr import Compare, Expr, render
from turnbound.reference.table import ANY_OP, Table, TraceProperty

GoalKind = Literal["invariant", "bound", "lemma", "trace"]


@dataclass(frozen=True)
class Goal:
    name: str
    kind: GoalKind
    text: str
    expect: Literal["holds", "violated"]
    expr: Expr | None = None
    prop_index: int | None = None
    at: tuple[str, ...] | None = None
    """A bound's terminals (None: all)."""

    def judged_at(self, place: str, terminals: object) -> bool:
        return place in terminals and (self.at is None or place in self.at)  # type: ignore[operator]

    def holds(self, enc: Encoding, f: Frame) -> z3.BoolRef:
        if self.kind == "trace":
            assert self.prop_index is not None
            return enc.property_ok(self.prop_index, f)
        assert self.expr is not None
        claim = enc.term(self.expr, f)
        return z3.Implies(enc.terminal(f, self.at), claim) if self.kind == "bound" else claim

    def edge(self) -> tuple[Expr, Expr, int] | None:
        """For a bound `lhs <= rhs` (or <, >=, >): the sides and the offset at which it is met exactly."""
        e = self.expr
        if self.kind != "bound" or not isinstance(e, Compare):
            return None
        if e.op == "<=":
            return e.left, e.right, 0
        if e.op == "<":
            return e.left, e.right, -1
        if e.op == ">=":
            return e.right, e.left, 0
        if e.op == ">":
            return e.right, e.left, -1
        if e.op == "==":  # an exact count: tight when a run reaches the judged terminal
            return e.left, e.right, 0
        return None


def _describe_property(p: TraceProperty) -> str:
    if p.kind == "at_most":
        return f"{p.op} at most {p.limit} time{'s' if p.limit != 1 else ''}"
    assert p.after is not None
    if p.after.raise_:
        after = f"{p.after.op} raises {p.after.raise_}" if p.after.op else f"{p.after.raise_} is raised"
    else:
        after = p.after.op or "any operation"
    if render(p.after.when) != "true":
        after += f" with {render(p.after.when)}"
    forbid = "host operation" if p.forbid == ANY_OP else p.forbid
    when = "next" if p.within == "next" else "afterwards"
    return f"after {after}: no {forbid} {when}"


def table_goals(table: Table) -> tuple[Goal, ...]:
    """Every claim in declaration order: invariants, bounds, lemmas, then trace properties."""
    out = [Goal(c.name, c.kind, c.text, c.expect, expr=c.expr, at=c.at) for c in table.claims + table.lemmas]
    out += [
        Goal(p.name, "trace", _describe_property(p), p.expect, prop_index=i)
        for i, p in enumerate(table.trace_properties)
    ]
    return tuple(out)
