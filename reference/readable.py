"""The facts readable at each location: one rule for the loader's scopes, the well-formedness
proofs and the z3 encoding.

A host call's facts (or a raised failure's fields) live at the location the call leads
to; an internal transition and the initial state carry none. A fact is readable at a
location when every entering edge provides it, with one type.
"""

from __future__ import annotations

from collections.abc import Iterable

from turnbound.reference.expr import Expr, refs
from turnbound.reference.table import Table, ValueSpec

Entering = tuple[str, tuple[ValueSpec, ...]]
"""An edge into a location: the location and the facts (or failure fields) it provides."""


def readable_facts(initial: str, entering: Iterable[Entering]) -> dict[str, dict[str, tuple[ValueSpec, ...]]]:
    """Per location, each readable fact with its specs, one per entering edge (domains may differ)."""
    incoming: dict[str, list[dict[str, ValueSpec]]] = {initial: [{}]}
    for target, specs in entering:
        incoming.setdefault(target, []).append({s.name: s for s in specs})
    out: dict[str, dict[str, tuple[ValueSpec, ...]]] = {}
    for place, edges in incoming.items():
        common: dict[str, tuple[ValueSpec, ...]] = {name: (spec,) for name, spec in edges[0].items()}
        for edge in edges[1:]:
            common = {
                name: (*specs, edge[name])
                for name, specs in common.items()
                if name in edge and edge[name].domain.type == specs[0].domain.type
            }
        out[place] = common
    return out


def table_entering(table: Table) -> Iterable[Entering]:
    for t in table.transitions:
        if t.op is None:
            yield t.target, ()
            continue
        yield t.target, table.operations[t.op].facts
        for err, target in t.on_raise.items():
            yield target, table.failures[err].fields


def facts_read(table: Table) -> dict[str, frozenset[str]]:
    """Per location, the facts of a state there that something reads: a guard, an argument or
    an update of a transition leaving it (a host call's updates and a failure's ghost updates
    read their own call's facts or fields first, so only other names count). No claim reads a
    fact (the loader's scopes), so a state's other facts decide nothing after it: a search
    that forgets them (`Machine(forget=True)`) stores states that differ only in them once."""
    out: dict[str, frozenset[str]] = {}
    for place in (*table.locations, *table.terminals):
        names: set[str] = set()
        for t in table.outgoing.get(place, ()):
            for e in (t.guard, *(e for _, e in t.args)):
                names.update(r.name for r in refs(e) if r.kind == "fact")
            own = {f.name for f in table.operations[t.op].facts} if t.op is not None else set()
            names.update(_facts_in(e for _, e in t.updates) - own)
            for err, ups in t.raise_updates.items():
                fields = {f.name for f in table.failures[err].fields}
                names.update(_facts_in(e for _, e in ups) - fields)
        out[place] = frozenset(names)
    return out


def _facts_in(exprs: Iterable[Expr]) -> set[str]:
    return {r.name for e in exprs for r in refs(e) if r.kind == "fact"}
