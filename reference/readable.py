"""The facts readable at each location: one rule for the loader's scopes, the well-formedness
proofs and the z3 encoding.

A host call's facts (or a raised failure's fields) live at the location the call leads
to; an internal transition and the initial state carry none. A fact is readable at a
location when every entering edge provides it, with one type.
"""

from __future__ import annotations

from collections.abc import Iterable

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
