"""The facts readable at each location: one rule for the loader's scopes, the well-formedness
proofs and the z3 encoding.

A host call's facts (or a raised failure's fields) live at the location the call leads
to; an internal transition and the initial state carry none. A fact is readable at a
location when every entering edge provides it, with one type.
"""

from __future__ import annotations

from collections.abc import Iterable

from turnbound.reference.expr import refs
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
    """Per location, the facts something there reads: a guard, an argument or an update (a
    failure's ghost updates included) of a transition leaving it. No claim reads a fact (the
    loader's scopes), so a state's other facts decide nothing after it: a search that forgets
    them (`Machine(forget=True)`) stores states that differ only in them once."""
    out: dict[str, frozenset[str]] = {}
    for place in (*table.locations, *table.terminals):
        names: set[str] = set()
        for t in table.outgoing.get(place, ()):
            exprs = [t.guard, *(e for _, e in t.args), *(e for _, e in t.updates)]
            exprs += [e for ups in t.raise_updates.values() for _, e in ups]
            names.update(r.name for e in exprs for r in refs(e) if r.kind == "fact")
        out[place] = frozenset(names)
    return out
