"""Candidate atoms for the inferred strengthening, generated from the table itself.

Each atom is a small fact about one state that may hold at some places: the table's
claims and lemmas; every integer comparison in a claim or guard together with its
neighbouring relations (`a < b` also gives `a <= b`, `a == b`, `a >= b`, `a > b`);
boolean atoms and their negations; every variable at its initial value; every int
variable >= 0; and for the ghost monitors: "never called yet", "within its limit",
"not called while this flag is false", "armed only when this flag or fact holds".
An atom can be built in z3 on a frame and evaluated on a concrete state, so cheap
concrete runs can discard most false candidates before the solver sees them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import z3
from turnbound.properties.prove.encoding import Encoding, Frame, fact_key
from turnbound.reference.expr import Compare, Expr, Lit, Logic, Not, Ref, render, walk
from turnbound.reference.expr_compile import compile_expr
from turnbound.reference.monitors import ARMED, IDLE, VIOLATED
from turnbound.reference.types import INT, BoolType, IntType, Value

Env = Mapping[str, Value]
Check = Callable[[Env, tuple[int, ...]], bool | None]
"""True/False on a concrete state (parameters, variables, readable facts; monitor states), None: unknown."""


@dataclass(frozen=True)
class Atom:
    text: str
    make: Callable[[Frame], z3.BoolRef]
    check: Check


_VARIANTS = ("<", "<=", "==", ">=", ">")


def _expr_atoms(exprs: list[Expr]) -> Iterator[Expr]:
    """Each expression, its int comparisons with their neighbouring relations, and boolean atoms."""
    for e in exprs:
        yield e
        for node in walk(e):
            if isinstance(node, Compare) and isinstance(node.left.type, IntType):
                for op in _VARIANTS:
                    yield Compare(op, node.left, node.right)  # type: ignore[arg-type]
            elif isinstance(node, Compare) or (isinstance(node, Ref) and isinstance(node.type, BoolType)):
                yield node
                yield Not(node)


def _expr_atom(enc: Encoding, e: Expr) -> Atom:
    fn = compile_expr(e)

    def check(env: Env, monitors: tuple[int, ...]) -> bool | None:
        try:
            return bool(fn(env))
        except KeyError:  # a fact that is not readable here
            return None

    return Atom(render(e), lambda f: enc.term(e, f), check)


def candidate_atoms(enc: Encoding) -> tuple[Atom, ...]:
    table = enc.table
    atoms: dict[str, Atom] = {}

    def add(atom: Atom) -> None:
        atoms.setdefault(atom.text, atom)

    claims = [c.expr for c in (*table.claims, *table.lemmas)]
    guards = [t.guard for t in table.transitions]
    for e in _expr_atoms(claims + guards):
        if not isinstance(e, Logic) or e in claims:
            add(_expr_atom(enc, e))
    for v in table.variables:
        ref = Ref(v.name, "var", v.type)
        add(_expr_atom(enc, Compare("==", ref, v.init)))
        if isinstance(v.type, IntType):
            add(_expr_atom(enc, Compare(">=", ref, Lit(0, INT))))
    bools = [v.name for v in table.variables if isinstance(v.type, BoolType)]
    for i, p in enumerate(enc.properties):
        if p.kind == "at_most":
            for atom in _call_count_atoms(i, f"calls({p.op})", p.limit, bools):
                add(atom)
        else:
            for atom in _monitor_atoms(enc, i, f"monitor({p.name})", bools):
                add(atom)
    return tuple(atoms.values())


def _call_count_atoms(i: int, calls: str, limit: int, bools: list[str]) -> Iterator[Atom]:
    yield Atom(f"{calls} == 0", lambda f: f.ghosts[i] == 0, lambda env, m: m[i] == 0)
    yield Atom(f"{calls} <= {limit}", lambda f: f.ghosts[i] <= limit, lambda env, m: m[i] <= limit)
    for b in bools:
        yield Atom(
            f"{b} or {calls} == 0",
            lambda f, b=b: z3.Or(f.vars[b], f.ghosts[i] == 0),  # type: ignore[misc]
            lambda env, m, b=b: bool(env[b]) or m[i] == 0,  # type: ignore[misc]
        )
        yield Atom(
            f"not {b} or {calls} == 0",
            lambda f, b=b: z3.Or(z3.Not(f.vars[b]), f.ghosts[i] == 0),  # type: ignore[misc]
            lambda env, m, b=b: not env[b] or m[i] == 0,  # type: ignore[misc]
        )


def _monitor_atoms(enc: Encoding, i: int, monitor: str, bools: list[str]) -> Iterator[Atom]:
    p = enc.properties[i]
    assert p.after is not None
    yield Atom(f"{monitor} idle", lambda f: f.ghosts[i] == IDLE, lambda env, m: m[i] == IDLE)
    yield Atom(f"{monitor} not violated", lambda f: f.ghosts[i] != VIOLATED, lambda env, m: m[i] != VIOLATED)
    literals: list[tuple[str, Callable[[Frame], z3.BoolRef]]] = [
        (b, lambda f, b=b: f.vars[b])  # type: ignore[misc]
        for b in bools
    ]
    readable = _outcome_names(enc, p.after.op, p.after.raise_)
    for r in sorted({n for n in walk(p.after.when) if isinstance(n, Ref)}, key=lambda r: r.name):
        if isinstance(r.type, BoolType) and r.name in readable:
            key = fact_key(r.name, r.type)
            literals.append((r.name, lambda f, key=key: f.facts[key]))  # type: ignore[misc]
    for name, lit in literals:
        for positive in (True, False):
            text = f"{monitor} armed -> {'' if positive else 'not '}{name}"

            def make(
                f: Frame, lit: Callable[[Frame], z3.BoolRef] = lit, positive: bool = positive
            ) -> z3.BoolRef:
                value = lit(f) if positive else z3.Not(lit(f))
                return z3.Or(f.ghosts[i] != ARMED, value)

            def check(
                env: Env, m: tuple[int, ...], name: str = name, positive: bool = positive
            ) -> bool | None:
                if m[i] != ARMED:
                    return True
                value = env.get(name)
                return None if value is None else bool(value) == positive

            yield Atom(text, make, check)


def _outcome_names(enc: Encoding, op: str | None, error: str | None) -> set[str]:
    """Names a pattern reads from the outcome (not the call's arguments)."""
    table = enc.table
    if error is not None:
        return {f.name for f in table.failures[error].fields}
    ops = [table.operations[op]] if op is not None else list(table.operations.values())
    return {f.name for o in ops for f in o.facts}
