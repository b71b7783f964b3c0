"""Systematic mutants of a table: the faults a careless edit of the table would introduce.

Mutants are made on the table document (the parsed TOML) and loaded through the
same loader as any table, so a mutant the loader's rules reject counts as caught
by the loader, and every mutant can be written out and replayed by a person.
Expressions are mutated on their typed trees and rendered back to text.

Why this module is long: it is the catalogue of mutation operators (`OPERATORS`), one
generator of ten to forty lines each with its helpers beside it, kept in one place so the
operators read as one list.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from turnbound.reference.errors import DefinitionError
from turnbound.reference.expr import (
    TRUE,
    Arith,
    Compare,
    Cond,
    Expr,
    Lit,
    Logic,
    Not,
    Ref,
    conjuncts,
    refs,
    render,
)
from turnbound.reference.loader import build_table
from turnbound.reference.table import CONTRACT_VIOLATION, Table, Transition
from turnbound.reference.types import INT, BoolType, EnumType, IntType

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


def _argument_variants(expr: Expr) -> Iterator[tuple[str, Expr]]:
    if isinstance(expr.type, BoolType):
        yield "flip", Lit(not expr.value, expr.type) if isinstance(expr, Lit) else Not(expr)
    elif isinstance(expr.type, IntType):
        yield "plus1", Arith("+", expr, Lit(1, INT))
        yield "minus1", Arith("-", expr, Lit(1, INT))
    elif isinstance(expr.type, EnumType):
        for member in expr.type.members:
            if not (isinstance(expr, Lit) and expr.value == member):
                yield member, Lit(member, expr.type)


def argument_mutants(table: Table, document: Document) -> Iterator[Mutant]:
    """Each argument as sent changed: a bool flipped, an int one more or one less, an enum
    member swapped for each other (`recovery=false` on the recovery round, `reason=budget`
    on the error salvage)."""
    for i, t in enumerate(table.transitions):
        for name, expr in t.args:
            for kind, variant in _argument_variants(expr):
                text = render(variant)

                def edit(doc: Document, i: int = i, name: str = name, text: str = text) -> None:
                    doc["transitions"][i]["args"][name] = text

                yield Mutant(
                    f"{t.id}.arg.{name}.{kind}",
                    "argument-value",
                    f"{t.id}: {t.op} sends {name} = {text}, not {render(expr)}",
                    _edited(document, edit),
                )


def _terminals(table: Table) -> list[str]:
    return [p for p in table.terminals if p != CONTRACT_VIOLATION]


def _entries(table: Table) -> dict[str, int]:
    """How many transitions and failure routes lead into each place."""
    count: dict[str, int] = {}
    for t in table.transitions:
        for place in (t.target, *t.on_raise.values()):
            count[place] = count.get(place, 0) + 1
    return count


def raise_target_mutants(table: Table, document: Document) -> Iterator[Mutant]:
    """Where a failure ends the turn, changed: each `on_raise` entry sent to every other
    terminal (a failure that propagates where it should be salvaged, a salvage reported
    as an error). Left out where the entry is the only way into its place (the mutant
    would not be a table). A transition's own target is `swap-target`'s; a failure's
    default `to` is the only way into its terminal, so it is not mutated."""
    entries = _entries(table)
    for i, t in enumerate(table.transitions):
        explicit = document["transitions"][i].get("on_raise", {})
        for failure, place in sorted(explicit.items()):
            if entries.get(place, 0) <= 1:
                continue
            for terminal in _terminals(table):
                if terminal == place:
                    continue

                def edit(doc: Document, i: int = i, failure: str = failure, terminal: str = terminal) -> None:
                    doc["transitions"][i]["on_raise"][failure] = terminal

                yield Mutant(
                    f"{t.id}.on_raise.{failure}.{terminal}",
                    "raise-target",
                    f"{t.id}: {failure} ends the turn at {terminal}, not {place}",
                    _edited(document, edit),
                )


def update_pair_mutants(table: Table, document: Document) -> Iterator[Mutant]:
    """Two updates of one transition forgotten together. `remove-update` drops each alone; a
    claim that ties two variables written by the same update (`rounds == ... + extra_rounds`
    where the forced finish adds `extraRounds` to both) passes when both are lost."""
    for i, t in enumerate(table.transitions):
        written = document["transitions"][i].get("update", {})
        own = [(var, expr) for var, expr in t.updates if var in written]  # not the loader's ghost updates
        for (a, ea), (b, eb) in itertools.combinations(own, 2):

            def edit(doc: Document, i: int = i, a: str = a, b: str = b) -> None:
                del doc["transitions"][i]["update"][a]
                del doc["transitions"][i]["update"][b]

            yield Mutant(
                f"{t.id}.update.{a}+{b}.remove",
                "remove-update-pair",
                f"{t.id}: remove the updates {a} = {render(ea)} and {b} = {render(eb)}",
                _edited(document, edit),
            )


def _fact_literal(node: Expr) -> tuple[str, bool] | None:
    """(fact, True) for a bool fact read as a conjunct, (fact, False) for its negation."""
    if isinstance(node, Ref) and node.kind == "fact" and isinstance(node.type, BoolType):
        return node.name, True
    if isinstance(node, Not):
        inner = _fact_literal(node.operand)
        if inner is not None and inner[1]:
            return inner[0], False
    return None


def _and(parts: list[Expr]) -> Expr:
    return TRUE if not parts else parts[0] if len(parts) == 1 else Logic("and", tuple(parts))


def priority_mutants(table: Table, document: Document) -> Iterator[Mutant]:
    """Where two facts can be set together, the other one checked first.

    At a location whose transitions for fact `f` (a conjunct `f`) take priority over the
    others (a conjunct `not f`), one of which reads fact `g`, the mutant lets `g` win: with
    both set it behaves as if `f` were not. The `f` transitions gain `not g`; in the others
    `not f` becomes `not f or g`. The table stays deterministic and covered; only a reply
    with both facts set behaves differently (which of `truncated` and
    `reasoningBudgetExhausted` wins).
    """
    index = {t.id: i for i, t in enumerate(table.transitions)}
    for location, outgoing in table.outgoing.items():
        parts = {t.id: list(conjuncts(t.guard)) for t in outgoing}
        literals: dict[str, dict[tuple[str, bool], Expr]] = {}
        for tid, cs in parts.items():
            literals[tid] = {lit: c for c in cs if (lit := _fact_literal(c)) is not None}
        facts = sorted({fact for lits in literals.values() for fact, _ in lits})
        for f, g in itertools.permutations(facts, 2):
            first = [t for t in outgoing if (f, True) in literals[t.id]]
            rest = [t for t in outgoing if (f, False) in literals[t.id]]
            reading = [t for t in rest if (g, True) in literals[t.id]]
            if not first or not reading:
                continue
            g_set = literals[reading[0].id][(g, True)]
            guards: dict[int, str] = {}
            for t in first:
                guards[index[t.id]] = render(_and([*parts[t.id], Not(g_set)]))
            for t in rest:
                negated = literals[t.id][(f, False)]
                weakened = Logic("or", (negated, g_set))
                guards[index[t.id]] = render(_and([weakened if c is negated else c for c in parts[t.id]]))

            def edit(doc: Document, guards: dict[int, str] = guards) -> None:
                for i, text in guards.items():
                    doc["transitions"][i]["guard"] = text

            yield Mutant(
                f"{location}.priority.{g}.over.{f}",
                "fact-priority",
                f"{location}: {g} is checked before {f} (with both set, not {_ids(first)})",
                _edited(document, edit),
            )


def _ids(ts: list[Transition]) -> str:
    return ", ".join(t.id for t in ts)


def step_mutants(table: Table, document: Document) -> Iterator[Mutant]:
    """A host call bypassed: the transition keeps its guard, target and the updates that do
    not read the call's facts, but calls nothing (a `done` never sent, a tool batch skipped).
    Made only where the target's transitions read none of the call's facts, so the mutant
    stays a table."""
    for i, t in enumerate(table.transitions):
        if t.op is None:
            continue
        facts = {spec.name for spec in table.operations[t.op].facts}
        after = table.outgoing.get(t.target, ())
        read = {r.name for nxt in after for e in _expressions(nxt) for r in refs(e) if r.kind == "fact"}
        if facts & read:
            continue
        kept = [var for var, e in t.updates if not {r.name for r in refs(e) if r.kind == "fact"} & facts]

        def edit(doc: Document, i: int = i, kept: list[str] = kept) -> None:
            tr = doc["transitions"][i]
            for key in ("op", "args", "on_raise"):
                tr.pop(key, None)
            update = {k: v for k, v in tr.get("update", {}).items() if k in kept}
            if update:
                tr["update"] = update
            else:
                tr.pop("update", None)

        yield Mutant(
            f"{t.id}.step.drop",
            "drop-step",
            f"{t.id}: goes to {t.target} without calling {t.op}",
            _edited(document, edit),
        )


def _expressions(t: Transition) -> list[Expr]:
    return [t.guard, *(e for _, e in t.args), *(e for _, e in t.updates)]


OPERATORS: dict[str, Callable[[Table, Document], Iterator[Mutant]]] = {
    "comparison": comparison_mutants,
    "drop-conjunct": conjunct_mutants,
    "remove-update": update_mutants,
    "widen-domain": domain_mutants,
    "swap-target": target_mutants,
    "argument-value": argument_mutants,
    "raise-target": raise_target_mutants,
    "remove-update-pair": update_pair_mutants,
    "fact-priority": priority_mutants,
    "drop-step": step_mutants,
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
