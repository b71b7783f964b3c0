"""The loader's rules for a transition's expressions: its guard (read in the facts available
where it starts), its arguments, its updates, and its ghost updates on a raise.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from turnbound.reference.expr import Expr
from turnbound.reference.expr_parse import Scope, Symbol
from turnbound.reference.readable import Entering, readable_facts
from turnbound.reference.rules_context import LoadContext
from turnbound.reference.rules_declarations import resolve_type
from turnbound.reference.rules_places import raise_target
from turnbound.reference.table import Failure, Operation, Transition
from turnbound.reference.types import BOOL, Type


def readable_fact_symbols(
    ctx: LoadContext, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
) -> dict[str, dict[str, Symbol]]:
    """Facts readable at each location (`turnbound.reference.readable`: one rule for every engine)."""
    entering: list[Entering] = []
    for t in ctx.doc.transitions:
        if t.op is None:
            entering.append((t.to, ()))
            continue
        op = operations[t.op]
        entering.append((t.to, op.facts))
        for err, target in raise_target(op.raises, t.on_raise, failures).items():
            entering.append((target, failures[err].fields))
    readable = readable_facts(ctx.doc.profile.initial, entering)
    return {
        loc: {name: Symbol(name, "fact", specs[0].domain.type) for name, specs in facts.items()}
        for loc, facts in readable.items()
    }


def build_transition(
    ctx: LoadContext,
    index: int,
    state_scope: Scope,
    operations: Mapping[str, Operation],
    failures: Mapping[str, Failure],
    available: Mapping[str, Mapping[str, Symbol]],
) -> Transition:
    t = ctx.doc.transitions[index]
    where = f"transition {t.id!r}"
    here = {**state_scope, **available.get(t.source, {})}
    guard = ctx.expr(f"{where}.guard", t.guard, here, BOOL)
    args: list[tuple[str, Expr]] = []
    update_scope: Scope = here
    on_raise: dict[str, str] = {}
    if t.op is not None:
        op = operations[t.op]
        for aname, atype in op.args:
            args.append((aname, ctx.expr(f"{where}.args.{aname}", t.args[aname], here, atype)))
        update_scope = {
            **state_scope,
            **{f.name: Symbol(f.name, "fact", f.domain.type) for f in op.facts},
        }
        on_raise = raise_target(op.raises, t.on_raise, failures)
    updates = []
    types = {name: resolve_type(ctx, "", v.type) for name, v in ctx.doc.variables.items()}
    for var, text in t.update.items():
        updates.append((var, ctx.expr(f"{where}.update.{var}", text, update_scope, types[var])))
    raise_updates = build_raise_updates(ctx, where, t.raise_update, on_raise, state_scope, failures, types)
    return Transition(
        id=t.id,
        source=t.source,
        target=t.to,
        guard=guard,
        op=t.op,
        args=tuple(args),
        updates=tuple(updates),
        on_raise=MappingProxyType(on_raise),
        doc=t.doc,
        raise_updates=MappingProxyType(raise_updates),
    )


def build_raise_updates(
    ctx: LoadContext,
    where: str,
    given: Mapping[str, Mapping[str, str]],
    on_raise: Mapping[str, str],
    state_scope: Scope,
    failures: Mapping[str, Failure],
    types: Mapping[str, Type],
) -> dict[str, tuple[tuple[str, Expr], ...]]:
    """Ghost updates on a raise: the call failed, so behaviour keeps its state; claims may count it."""
    out = {}
    for err, updates in given.items():
        here = f"{where}.raise_update.{err}"
        if err not in on_raise:
            raise ctx.fail(here, "the transition's operation does not raise this failure")
        scope = {
            **state_scope,
            **{f.name: Symbol(f.name, "fact", f.domain.type) for f in failures[err].fields},
        }
        parsed = []
        for var, text in updates.items():
            doc = ctx.doc.variables.get(var)
            if doc is None:
                raise ctx.fail(f"{here}.{var}", f"{var!r} is not a declared variable")
            if not doc.ghost:
                raise ctx.fail(
                    f"{here}.{var}",
                    f"{var!r} is not a ghost; a raise keeps the state, only ghosts may be updated",
                )
            parsed.append((var, ctx.expr(f"{here}.{var}", text, scope, types[var])))
        out[err] = tuple(parsed)
    return out
