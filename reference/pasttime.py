"""Step claims and past-time monitors, compiled into ghost variables and their updates.

The classical construction of monitors for past-time temporal logic: one piece of state
per operator, updated on every step. Here a step is a host call: each `[[monitors]]`
entry becomes a ghost variable (`once`, `previous`, `so_far`: bool; `count`: int) and
each `[[step_claims]]` entry a ghost bool that stays true while every call it judges
satisfied it, plus an invariant reading it. The updates are ordinary (ghost) updates of
the transitions that call the operation, on return, or on a raise (`raise_updates`), so
every engine — the machine, the explorer, Hypothesis, `validate`, conformance, z3 and the
Promela export — judges them as plain state, with no code of its own.

In `when` and `expr`, `arg.a` is the argument expression the transition sends, `next.x`
the update it makes to `x` (including the ghost updates of the monitors declared before),
and `fact.f` the fact returned (or the failure's field). A plain name reads the state
before the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from turnbound.reference.errors import TableError
from turnbound.reference.expr import FALSE, TRUE, Arith, Compare, Cond, Expr, Lit, Logic, Neg, Not, Ref, refs
from turnbound.reference.table import ANY_OP, Monitor, StepClaim, Transition
from turnbound.reference.types import BOOL, INT

Updates = tuple[tuple[str, Expr], ...]


def substitute(node: Expr, mapping: Mapping[str, Expr]) -> Expr:
    """The tree with every reference named in `mapping` replaced by its expression."""
    if isinstance(node, Ref):
        return mapping.get(node.name, node)
    if isinstance(node, Lit):
        return node
    if isinstance(node, Not):
        return Not(substitute(node.operand, mapping))
    if isinstance(node, Neg):
        return Neg(substitute(node.operand, mapping))
    if isinstance(node, Arith):
        return Arith(node.op, substitute(node.left, mapping), substitute(node.right, mapping))
    if isinstance(node, Compare):
        return Compare(node.op, substitute(node.left, mapping), substitute(node.right, mapping))
    if isinstance(node, Logic):
        return Logic(node.op, tuple(substitute(o, mapping) for o in node.operands))
    assert isinstance(node, Cond)
    return Cond(
        substitute(node.test, mapping),
        substitute(node.then, mapping),
        substitute(node.orelse, mapping),
        node.type,
    )


class _Compiler:
    def __init__(self, source: str, var_types: Mapping[str, object]) -> None:
        self.source = source
        self.var_types = var_types

    def bindings(
        self, where: str, t: Transition, updates: Updates, raise_: str | None, used: Expr
    ) -> dict[str, Expr]:
        """What `arg.a`, `next.x` and `fact.f` stand for on this edge (facts stay facts)."""
        out: dict[str, Expr] = {}
        wanted = {r.name for r in refs(used)}
        for name, expr in t.args:
            key = f"arg.{name}"
            if key not in wanted:
                continue
            stale = sorted(r.name for r in refs(expr) if r.kind == "fact")
            if stale:
                raise TableError(
                    self.source,
                    where,
                    f"reads {key}, which transition {t.id!r} computes from the fact {stale[0]!r} of an "
                    "earlier call; a step claim can read only arguments computed from the state "
                    "(state it over that call's fact instead)",
                )
            out[key] = expr
        made = dict(updates)
        for name in self.var_types:
            key = f"next.{name}"
            if key in wanted:
                out[key] = made.get(name) or Ref(name, "var", self.var_types[name])  # type: ignore[arg-type]
        for r in refs(used):
            if r.name.startswith("fact."):
                out[r.name] = Ref(r.name[len("fact.") :], "fact", r.type)
        return out

    def edge(
        self,
        t: Transition,
        updates: Updates,
        raise_: str | None,
        monitors: tuple[Monitor, ...],
        claims: tuple[StepClaim, ...],
    ) -> Updates:
        """The edge's updates with every monitor's and step claim's ghost update added."""
        out = list(updates)
        for m in monitors:
            matches = m.op in (t.op, ANY_OP) and m.raise_ == raise_
            if not matches and m.kind != "previous":
                continue
            me = Ref(m.name, "var", INT if m.kind == "count" else BOOL)
            when = (
                substitute(m.when, self.bindings(f"monitors {m.name!r}.when", t, tuple(out), raise_, m.when))
                if matches
                else FALSE
            )
            always = when == TRUE
            if m.kind == "once":
                new: Expr = TRUE if always else Logic("or", (me, when))
            elif m.kind == "so_far":
                new = me if always else Logic("and", (me, when))
            elif m.kind == "count":
                new = Arith("+", me, Lit(1, INT) if always else Cond(when, Lit(1, INT), Lit(0, INT), INT))
            else:
                new = when
            out.append((m.name, new))
        for c in claims:
            if c.op != t.op or c.raise_ != raise_:
                continue
            both = Logic("and", (c.when, c.expr))
            mapping = self.bindings(f"step_claims {c.name!r}", t, tuple(out), raise_, both)
            expr = substitute(c.expr, mapping)
            holds = expr if c.when == TRUE else Logic("or", (Not(substitute(c.when, mapping)), expr))
            out.append((c.name, Logic("and", (Ref(c.name, "var", BOOL), holds))))
        return tuple(out)


def compile_pasttime(
    source: str,
    transitions: tuple[Transition, ...],
    raises: Mapping[str, tuple[str, ...]],
    var_types: Mapping[str, object],
    monitors: tuple[Monitor, ...],
    claims: tuple[StepClaim, ...],
) -> tuple[Transition, ...]:
    """Every transition that calls an operation, with the ghost updates of the monitors and
    step claims added on return and on each failure the operation raises."""
    if not monitors and not claims:
        return transitions
    c = _Compiler(source, var_types)
    out = []
    for t in transitions:
        if t.op is None:
            out.append(t)
            continue
        updates = c.edge(t, t.updates, None, monitors, claims)
        on_raise = {
            err: c.edge(t, t.raise_updates.get(err, ()), err, monitors, claims) for err in raises[t.op]
        }
        out.append(replace(t, updates=updates, raise_updates={k: v for k, v in on_raise.items() if v}))
    return tuple(out)
