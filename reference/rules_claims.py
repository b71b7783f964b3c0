"""The loader's rules for claims: invariants, bounds and lemmas (a bound may name the
terminals where it is judged), and trace properties with their step patterns.
"""

from __future__ import annotations

from collections.abc import Mapping

from turnbound.reference.expr_parse import Scope, Symbol
from turnbound.reference.model import ClaimDoc, StepPatternDoc
from turnbound.reference.rules_context import LoadContext
from turnbound.reference.rules_declarations import check_ident
from turnbound.reference.table import (
    ANY_OP,
    BUILTIN_TERMINALS,
    Claim,
    Failure,
    Operation,
    StepPattern,
    TraceProperty,
)
from turnbound.reference.types import BOOL


def build_claims(
    ctx: LoadContext,
    section: str,
    docs: list[ClaimDoc],
    scope: Scope,
    kind: str,
    terminals: Mapping[str, str] | None = None,
) -> tuple[Claim, ...]:
    """Invariants, bounds or lemmas; only a bound (`terminals` given) may name where it is judged."""
    out = []
    names: set[str] = set()
    for i, c in enumerate(docs):
        where = f"{section}[{i}] {c.name!r}"
        check_ident(ctx, where, c.name)
        if c.name in names:
            raise ctx.fail(where, "two claims have this name")
        names.add(c.name)
        expr = ctx.expr(f"{where}.expr", c.expr, scope, BOOL)
        at = None if c.at is None else claim_terminals(ctx, f"{where}.at", c.at, terminals)
        out.append(Claim(c.name, kind, expr, c.expect, c.doc, at=at))  # type: ignore[arg-type]
    return tuple(out)


def claim_terminals(
    ctx: LoadContext, where: str, names: list[str], terminals: Mapping[str, str] | None
) -> tuple[str, ...]:
    if terminals is None:
        raise ctx.fail(where, "only a bound is judged at terminals; an invariant or lemma holds everywhere")
    own = [t for t in terminals if t not in BUILTIN_TERMINALS]
    if not names:
        raise ctx.fail(where, f"name at least one terminal: {', '.join(own)}")
    for name in names:
        if name not in own:
            raise ctx.fail(where, f"{name!r} is not one of the table's terminals: {', '.join(own)}")
    if len(set(names)) != len(names):
        raise ctx.fail(where, "a terminal is listed twice")
    return tuple(names)


def build_trace_properties(
    ctx: LoadContext, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
) -> tuple[TraceProperty, ...]:
    out = []
    names = {c.name for c in (*ctx.doc.invariants, *ctx.doc.bounds, *ctx.doc.lemmas)}
    names |= {m.name for m in ctx.doc.monitors} | {c.name for c in ctx.doc.step_claims}
    for i, p in enumerate(ctx.doc.trace_properties):
        where = f"trace_properties[{i}] {p.name!r}"
        check_ident(ctx, where, p.name)
        if p.name in names:
            raise ctx.fail(where, "another claim or trace property has this name")
        names.add(p.name)
        if p.at_most is not None:
            if p.op not in operations or p.after is not None or p.forbid is not None:
                raise ctx.fail(where, "an at_most property names a declared op and nothing else")
            out.append(TraceProperty(p.name, "at_most", op=p.op, limit=p.at_most, expect=p.expect, doc=p.doc))
            continue
        if p.after is None or p.forbid is None:
            raise ctx.fail(where, "give either op + at_most, or after + forbid")
        if p.forbid != ANY_OP and p.forbid not in operations:
            raise ctx.fail(f"{where}.forbid", f"unknown operation {p.forbid!r} (or use {ANY_OP!r})")
        pattern = step_pattern(ctx, f"{where}.after", p.after, operations, failures)
        out.append(
            TraceProperty(
                p.name,
                "never_after",
                after=pattern,
                forbid=p.forbid,
                within=p.within,
                expect=p.expect,
                doc=p.doc,
            )
        )
    return tuple(out)


def step_pattern(
    ctx: LoadContext,
    where: str,
    doc: StepPatternDoc,
    operations: Mapping[str, Operation],
    failures: Mapping[str, Failure],
) -> StepPattern:
    scope: dict[str, Symbol] = {}
    if doc.op is not None:
        op = operations.get(doc.op)
        if op is None:
            raise ctx.fail(f"{where}.op", f"unknown operation {doc.op!r}")
        scope.update({a: Symbol(a, "fact", t) for a, t in op.args})
        if doc.raise_ is None:
            scope.update({f.name: Symbol(f.name, "fact", f.domain.type) for f in op.facts})
        elif doc.raise_ not in op.raises:
            raise ctx.fail(f"{where}.raise", f"{doc.op} does not raise {doc.raise_!r}")
    if doc.raise_ is not None:
        failure = failures.get(doc.raise_)
        if failure is None:
            raise ctx.fail(f"{where}.raise", f"unknown failure {doc.raise_!r}")
        scope.update({f.name: Symbol(f.name, "fact", f.domain.type) for f in failure.fields})
    when = ctx.expr(f"{where}.when", doc.when, scope, BOOL)
    return StepPattern(doc.op, doc.raise_, when)
