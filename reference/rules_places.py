"""The loader's rules for places: locations and terminals, what each transition refers to,
where a raise goes, and that every location is reachable and has a way out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from turnbound.reference.rules_context import LoadContext
from turnbound.reference.rules_declarations import check_ident
from turnbound.reference.table import BUILTIN_TERMINALS, Failure, Operation


def build_places(ctx: LoadContext) -> tuple[dict[str, str], dict[str, str]]:
    locations = dict(ctx.doc.locations)
    terminals = {**BUILTIN_TERMINALS, **ctx.doc.terminals}
    for name in [*locations, *terminals]:
        check_ident(ctx, f"locations.{name}" if name in locations else f"terminals.{name}", name)
    both = sorted(set(locations) & set(terminals))
    if both:
        raise ctx.fail("terminals", f"these names are both locations and terminals: {both}")
    if not ctx.doc.profile.initial:
        raise ctx.fail("profile.initial", "missing: name the location a run starts in")
    if ctx.doc.profile.initial not in locations:
        raise ctx.fail(
            "profile.initial", f"initial location {ctx.doc.profile.initial!r} is not under [locations]"
        )
    return locations, terminals


def check_place(
    ctx: LoadContext, where: str, name: str, locations: Mapping[str, str], terminals: Mapping[str, str]
) -> None:
    if name not in locations and name not in terminals:
        raise ctx.fail(where, f"unknown location {name!r}; declare it under [locations] or [terminals]")


def check_transition_refs(
    ctx: LoadContext,
    operations: Mapping[str, Operation],
    failures: Mapping[str, Failure],
    locations: Mapping[str, str],
    terminals: Mapping[str, str],
) -> None:
    seen: set[str] = set()
    for t in ctx.doc.transitions:
        where = f"transition {t.id!r}"
        check_ident(ctx, where, t.id)
        if t.id in seen:
            raise ctx.fail(where, "two transitions have this id; ids must be unique")
        seen.add(t.id)
        if t.source in terminals:
            raise ctx.fail(f"{where}.from", f"{t.source!r} is a terminal; a terminal has no way out")
        check_place(ctx, f"{where}.from", t.source, locations, terminals)
        check_place(ctx, f"{where}.to", t.to, locations, terminals)
        for var in t.update:
            if var not in ctx.doc.variables:
                raise ctx.fail(f"{where}.update.{var}", f"{var!r} is not a declared variable")
        if t.op is None:
            for fieldname, value in (
                ("args", t.args),
                ("on_raise", t.on_raise),
                ("raise_update", t.raise_update),
            ):
                if value:
                    raise ctx.fail(f"{where}.{fieldname}", "only a transition with an op can have this")
            continue
        op = operations.get(t.op)
        if op is None:
            raise ctx.fail(f"{where}.op", f"unknown operation {t.op!r}; declare it under [operations]")
        want = {a for a, _ in op.args}
        if set(t.args) != want:
            raise ctx.fail(
                f"{where}.args",
                f"{t.op} takes arguments {sorted(want)}, the transition gives {sorted(t.args)}",
            )
        for err, target in t.on_raise.items():
            if err not in op.raises:
                raise ctx.fail(f"{where}.on_raise.{err}", f"{t.op} does not raise {err!r}")
            check_place(ctx, f"{where}.on_raise.{err}", target, locations, terminals)
        for err in op.raises:
            if err not in t.on_raise and failures[err].to is None:
                raise ctx.fail(
                    f"{where}.on_raise",
                    f"{t.op} may raise {err!r} but neither the transition nor failures.{err}.to "
                    "says where it goes",
                )


def raise_target(
    t_op_raises: Iterable[str], on_raise: Mapping[str, str], failures: Mapping[str, Failure]
) -> dict[str, str]:
    out = {}
    for err in t_op_raises:
        target = on_raise.get(err) or failures[err].to
        assert target is not None
        out[err] = target
    return out


def location_edges(
    ctx: LoadContext, operations: Mapping[str, Operation], failures: Mapping[str, Failure]
) -> dict[str, set[str]]:
    """Where each location can go next, raise targets included."""
    out: dict[str, set[str]] = {}
    for t in ctx.doc.transitions:
        nexts = out.setdefault(t.source, set())
        nexts.add(t.to)
        if t.op is not None:
            nexts.update(raise_target(operations[t.op].raises, t.on_raise, failures).values())
    return out


def check_reachable(ctx: LoadContext, edges: Mapping[str, set[str]], locations: Mapping[str, str]) -> None:
    seen = {ctx.doc.profile.initial}
    frontier = [ctx.doc.profile.initial]
    while frontier:
        for nxt in edges.get(frontier.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    unreachable = sorted(set(locations) - seen)
    if unreachable:
        raise ctx.fail("locations", f"these locations are unreachable from the initial one: {unreachable}")
    dead = sorted(set(ctx.doc.terminals) - set(BUILTIN_TERMINALS) - seen)
    if dead:
        raise ctx.fail("terminals", f"these terminals are unreachable from the initial location: {dead}")


def check_way_out(ctx: LoadContext, locations: Mapping[str, str]) -> None:
    sources = {t.source for t in ctx.doc.transitions}
    stuck = sorted(set(locations) - sources)
    if stuck:
        raise ctx.fail(
            "locations", f"these locations have no outgoing transition and are not terminals: {stuck}"
        )
