"""The loader's rules for monitors and step claims (compiled by `turnbound.reference.pasttime`):
each gets a ghost variable named after it, and its expressions read a call's step scope.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from turnbound.reference.expr import Lit
from turnbound.reference.expr_parse import Scope, Symbol
from turnbound.reference.model import MonitorDoc, StepClaimDoc
from turnbound.reference.rules_context import LoadContext
from turnbound.reference.rules_declarations import check_ident
from turnbound.reference.table import ANY_OP, Failure, Monitor, Operation, StepClaim, Variable
from turnbound.reference.types import BOOL, INT


def pasttime_variables(
    ctx: LoadContext,
    param_scope: Scope,
    variables: set[str],
    operations: Mapping[str, Operation],
    failures: Mapping[str, Failure],
) -> tuple[Variable, ...]:
    """The ghost variable of each monitor and step claim, named after it."""
    taken = set(param_scope) | variables
    taken |= {f.name for o in operations.values() for f in o.facts}
    taken |= {f.name for x in failures.values() for f in x.fields}
    taken |= {m for e in ctx.enums.values() for m in e.members}
    claims = {c.name for c in (*ctx.doc.invariants, *ctx.doc.bounds, *ctx.doc.lemmas)}
    claims |= {p.name for p in ctx.doc.trace_properties}
    out = []
    entries: list[tuple[str, MonitorDoc | StepClaimDoc]] = [
        *((f"monitors[{i}] {m.name!r}", m) for i, m in enumerate(ctx.doc.monitors)),
        *((f"step_claims[{i}] {c.name!r}", c) for i, c in enumerate(ctx.doc.step_claims)),
    ]
    for where, e in entries:
        check_ident(ctx, where, e.name)
        if e.name in taken or e.name in claims:
            raise ctx.fail(
                where,
                f"{e.name!r} is already the name of a parameter, variable, fact, enum member or claim",
            )
        taken.add(e.name)
        if isinstance(e, MonitorDoc) and e.op == ANY_OP:
            if e.raise_ is not None and e.raise_ not in failures:
                raise ctx.fail(f"{where}.raise", f"unknown failure {e.raise_!r}")
        else:
            op = operations.get(e.op)
            if op is None:
                raise ctx.fail(f"{where}.op", f"unknown operation {e.op!r}; declare it under [operations]")
            if e.raise_ is not None and e.raise_ not in op.raises:
                raise ctx.fail(f"{where}.raise", f"{e.op} does not raise {e.raise_!r}")
        if isinstance(e, MonitorDoc) and e.kind == "count":
            out.append(Variable(e.name, INT, Lit(0, INT), doc=e.doc, ghost=True))
        else:
            init = not (isinstance(e, MonitorDoc) and e.kind in ("once", "previous"))
            out.append(Variable(e.name, BOOL, Lit(init, BOOL), doc=e.doc, ghost=True))
    return tuple(out)


def step_scope(
    state_scope: Scope, op: Operation | None, raise_: str | None, failures: Mapping[str, Failure]
) -> dict[str, Symbol]:
    """Plain names: the state before the call; `next.x` after; `arg.a` sent; `fact.f` returned
    (for a monitor of any operation: the state, and a failure's fields)."""
    scope: dict[str, Symbol] = dict(state_scope)
    if op is None:
        specs = () if raise_ is None else failures[raise_].fields
        for f in specs:
            scope[f"fact.{f.name}"] = Symbol(f"fact.{f.name}", "fact", f.domain.type)
        return scope
    for name, sym in state_scope.items():
        if sym.kind == "var":
            scope[f"next.{name}"] = Symbol(f"next.{name}", "var", sym.type)
    for aname, atype in op.args:
        scope[f"arg.{aname}"] = Symbol(f"arg.{aname}", "var", atype)
    specs = op.facts if raise_ is None else failures[raise_].fields
    for f in specs:
        scope[f"fact.{f.name}"] = Symbol(f"fact.{f.name}", "fact", f.domain.type)
    return scope


def build_monitors(
    ctx: LoadContext, state_scope: Scope, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
) -> tuple[Monitor, ...]:
    out = []
    for i, m in enumerate(ctx.doc.monitors):
        where = f"monitors[{i}] {m.name!r}"
        scope = step_scope(state_scope, operations.get(m.op), m.raise_, failures)
        when = ctx.expr(f"{where}.when", m.when, scope, BOOL)
        out.append(Monitor(m.name, m.kind, m.op, m.raise_, when, m.doc))
    return tuple(out)


def build_step_claims(
    ctx: LoadContext, state_scope: Scope, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
) -> tuple[tuple[StepClaim, tuple[Literal["holds", "violated"], str]], ...]:
    out = []
    for i, c in enumerate(ctx.doc.step_claims):
        where = f"step_claims[{i}] {c.name!r}"
        scope = step_scope(state_scope, operations[c.op], c.raise_, failures)
        when = ctx.expr(f"{where}.when", c.when, scope, BOOL)
        expr = ctx.expr(f"{where}.expr", c.expr, scope, BOOL)
        out.append((StepClaim(c.name, c.op, c.raise_, when, expr), (c.expect, c.doc)))
    return tuple(out)
