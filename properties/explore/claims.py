"""The claims judged in a state, compiled once per exploration: invariants and lemmas on every
state (remembered per valuation of what they read, shared by the atomic search and the
checker), bounds with their two sides for tightness.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from turnbound.reference.expr import Compare, Expr, refs, render
from turnbound.reference.expr_compile import Compiled, compile_expr
from turnbound.reference.judge import Judge
from turnbound.reference.machine import Machine
from turnbound.reference.table import ANY_OP, Claim, Table, TraceProperty
from turnbound.reference.types import Value
from turnbound.reference.update_step import value_picker


@dataclass(frozen=True)
class StateClaim:
    """A claim judged in states (an invariant, lemma or bound), compiled, with a bound's two sides."""

    claim: Claim
    check: Compiled
    lhs: Compiled | None
    rhs: Compiled | None
    rhs_params_only: bool


def bound_sides(expr: Expr) -> tuple[Expr, Expr] | None:
    """`lhs <= rhs` (or `rhs >= lhs`) as its two sides; other shapes have no tightness."""
    if isinstance(expr, Compare) and expr.op == "<=":
        return expr.left, expr.right
    if isinstance(expr, Compare) and expr.op == ">=":
        return expr.right, expr.left
    if isinstance(expr, Compare) and expr.op == "==":  # an exact count: tight where it is met
        return expr.left, expr.right
    return None


def state_claim(c: Claim, check: Compiled) -> StateClaim:
    """The judge's compiled claim, with the sides of a bound for its tightness."""
    sides = bound_sides(c.expr)
    if sides is None:
        return StateClaim(c, check, None, None, False)
    lhs, rhs = sides
    params_only = all(r.kind == "param" for r in refs(rhs))
    return StateClaim(c, check, compile_expr(lhs), compile_expr(rhs), params_only)


Pick = Callable[[tuple[Value, ...]], object]
Judged = tuple[bool, tuple[int, int] | None]
"""A bound's verdict on a valuation, and its two sides there (None: not a comparison)."""


def picker(expr: Expr, slots: Mapping[str, int]) -> Pick:
    """The values of the variables `expr` reads, from a state's values."""
    return value_picker(tuple(sorted({slots[r.name] for r in refs(expr) if r.kind == "var"})))


def describe_property(p: TraceProperty) -> str:
    """A trace property as one line of text."""
    if p.kind == "at_most":
        return f"{p.op} at most {p.limit}x per run"
    assert p.after is not None
    what = p.after.op or "a call"
    if p.after.raise_ is not None:
        what += f" raising {p.after.raise_}"
    when = render(p.after.when)
    if when != "true":
        what += f" with {when}"
    if p.forbid == ANY_OP:
        return f"after {what}: no {'next' if p.within == 'next' else 'further'} call"
    return f"after {what}: no {p.forbid} {'next' if p.within == 'next' else 'later'}"


class StateClaimMemo:
    """The invariants and lemmas each variable valuation breaks, computed once per valuation and
    shared by the atomic search (which stores a state that breaks one) and the checker."""

    def __init__(self, table: Table, machine: Machine) -> None:
        self.machine = machine
        self.judge = judge = Judge(table)
        self.claims = [(c.name, fn) for c, fn in judge.invariants]
        read = {r.name for c, _ in judge.invariants for r in refs(c.expr) if r.kind == "var"}
        self.read = [(name, i) for i, name in enumerate(machine.var_names) if name in read]
        """The variables the claims read: the memo's key is their values alone, so it holds no
        state's whole valuation (an atomic search does not keep the states it walks through)."""
        slots = [i for _, i in self.read]
        self.pick = value_picker(tuple(slots))
        self.memo: dict[object, tuple[str, ...]] = {}

    def broken(self, values: tuple[Value, ...]) -> tuple[str, ...]:
        key = self.pick(values)
        found = self.memo.get(key)
        if found is None:
            env: dict[str, Value] = dict(self.machine.params)
            env.update((name, values[i]) for name, i in self.read)
            found = self.memo[key] = tuple(name for name, fn in self.claims if not fn(env))
        return found

    def breaks(self, values: tuple[Value, ...]) -> bool:
        return bool(self.broken(values))
