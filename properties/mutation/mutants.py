"""Systematic mutants of a table: the faults a careless edit of the table would introduce.

Mutants are made on the table document (the parsed TOML) and loaded through the
same loader as any table, so a mutant the loader's rules reject counts as caught
by the loader, and every mutant can be written out and replayed by a person.
Expressions are mutated on their typed trees and rendered back to text.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from turnbound.reference.errors import DefinitionError
from turnbound.reference.expr import TRUE, Arith, Compare, Cond, Expr, Lit, Logic, Not, render
from turnbound.reference.loader import build_table
from turnbound.reference.table import CONTRACT_VIOLATION, Table
from turnbound.reference.types import INT, IntType

Document = dict[str, Any]


@dataclass(frozen=True)
class Mutant:
    id: str
    operator: str
    description: str
    document: Document

    def load(self, source: str) -> Table:
        """The mutant as a table; raises `DefinitionError` if the loader's rules reject it."""
        text = json.dumps(self.document, sort_keys=True)
        return build_table(
            self.document, f"{source}#mutant:{self.id}", hashlib.sha256(text.encode()).hexdigest()
        )


_FLIP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}

Rebuild = Callable[[Expr], Expr]


def _compare_sites(node: Expr) -> Iterator[tuple[Compare, Rebuild]]:
    """Every comparison in the tree, with a function that rebuilds the tree around a replacement."""
    if isinstance(node, Compare):
        yield node, lambda new: new
    elif isinstance(node, Not):
        for site, inner in _compare_sites(node.operand):
            yield site, lambda new, inner=inner: Not(inner(new))  # type: ignore[misc]
    elif isinstance(node, Logic):
        for i, part in enumerate(node.operands):
            for site, inner in _compare_sites(part):

                def rebuild(new: Expr, i: int = i, inner: Rebuild = inner, node: Logic = node) -> Expr:
                    parts = list(node.operands)
                    parts[i] = inner(new)
                    return Logic(node.op, tuple(parts))

                yield site, rebuild
    elif isinstance(node, Cond):
        for site, inner in _compare_sites(node.test):
            yield site, lambda new, inner=inner: Cond(inner(new), node.then, node.orelse, node.type)  # type: ignore[misc]


def _comparison_variants(c: Compare) -> Iterator[tuple[str, Compare]]:
    yield "flip", Compare(_FLIP[c.op], c.left, c.right)  # type: ignore[arg-type]
    if isinstance(c.left.type, IntType) and c.op not in ("==", "!="):
        yield "shift+1", Compare(c.op, c.left, Arith("+", c.right, Lit(1, INT)))
        yield "shift-1", Compare(c.op, c.left, Arith("-", c.right, Lit(1, INT)))


def _edited(document: Document, edit: Callable[[Document], None]) -> Document:
    out = copy.deepcopy(document)
    edit(out)
    return out


def _set_guard(i: int, text: str) -> Callable[[Document], None]:
    def edit(doc: Document) -> None:
        doc["transitions"][i]["guard"] = text

    return edit


def comparison_mutants(table: Table, document: Document) -> Iterator[Mutant]:
    for i, t in enumerate(table.transitions):
        for n, (site, rebuild) in enumerate(_compare_sites(t.guard)):
            for kind, variant in _comparison_variants(site):
                guard = render(rebuild(variant))
                yield Mutant(
                    f"{t.id}.guard.cmp{n}.{kind}",
                    "comparison",
                    f"{t.id}: guard {render(t.guard)!r} -> {guard!r}",
                    _edited(document, _set_guard(i, guard)),
                )


def conjunct_mutants(table: Table, document: Document) -> Iterator[Mutant]:
    for i, t in enumerate(table.transitions):
        parts = t.guard.operands if isinstance(t.guard, Logic) and t.guard.op == "and" else (t.guard,)
        if parts == (TRUE,):
            continue
        for n, part in enumerate(parts):
            rest = parts[:n] + parts[n + 1 :]
            guard = TRUE if not rest else rest[0] if len(rest) == 1 else Logic("and", rest)
            yield Mutant(
                f"{t.id}.guard.drop{n}",
                "drop-conjunct",
                f"{t.id}: drop {render(part)!r} from the guard",
                _edited(document, _set_guard(i, render(guard))),
            )


def update_mutants(table: Table, document: Document) -> Iterator[Mutant]:
    for i, t in enumerate(table.transitions):
        written = document["transitions"][i].get("update", {})
        for var, expr in t.updates:
            if var not in written:  # a monitor's or step claim's ghost update, compiled by the loader
                continue

            def edit(doc: Document, i: int = i, var: str = var) -> None:
                del doc["transitions"][i]["update"][var]

            yield Mutant(
                f"{t.id}.update.{var}.remove",
                "remove-update",
                f"{t.id}: remove the update {var} = {render(expr)}",
                _edited(document, edit),
            )


def domain_mutants(table: Table, document: Document) -> Iterator[Mutant]:
    for op in table.operations.values():
        for spec in op.facts:
            if not isinstance(spec.domain.type, IntType):
                continue
            for bound, delta, kind in (("max", 1, "max+1"), ("min", -1, "min-1")):

                def edit(
                    doc: Document, op: str = op.name, fact: str = spec.name, b: str = bound, d: int = delta
                ) -> None:
                    doc["operations"][op]["facts"][fact][b] += d

                value = (spec.domain.hi if bound == "max" else spec.domain.lo) + delta
                yield Mutant(
                    f"{op.name}.facts.{spec.name}.{kind}",
                    "widen-domain",
                    f"{op.name}: fact {spec.name} admits {value}",
                    _edited(document, edit),
                )


def target_mutants(table: Table, document: Document) -> Iterator[Mutant]:
    places = [*table.locations, *(p for p in table.terminals if p != CONTRACT_VIOLATION)]
    for i, t in enumerate(table.transitions):
        for place in places:
            if place == t.target:
                continue

            def edit(doc: Document, i: int = i, place: str = place) -> None:
                doc["transitions"][i]["to"] = place

            yield Mutant(
                f"{t.id}.to.{place}",
                "swap-target",
                f"{t.id}: goes to {place}, not {t.target}",
                _edited(document, edit),
            )


OPERATORS: dict[str, Callable[[Table, Document], Iterator[Mutant]]] = {
    "comparison": comparison_mutants,
    "drop-conjunct": conjunct_mutants,
    "remove-update": update_mutants,
    "widen-domain": domain_mutants,
    "swap-target": target_mutants,
}


def mutants(table: Table, document: Document, operators: list[str] | None = None) -> list[Mutant]:
    """Every mutant of every chosen operator, in a fixed order (`document` is the table's parsed TOML)."""
    unknown = sorted(set(operators or []) - set(OPERATORS))
    if unknown:
        raise DefinitionError(f"unknown mutation operators {unknown}; known: {', '.join(OPERATORS)}")
    out: list[Mutant] = []
    for name, operator in OPERATORS.items():
        if operators is None or name in operators:
            out.extend(operator(table, document))
    return out
