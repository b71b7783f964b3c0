"""The ghost rule: a variable declared `ghost = true` is proof scaffolding, never behaviour.

A ghost may be read by invariants, bounds and lemmas, and by the updates of ghost
variables; never by a guard, an operation's arguments, the update of a variable that is
not a ghost, or a report rule. So no host call, outcome, counter or probe line depends
on a ghost's value, and two tables that differ only in how they keep their ghosts
behave alike: mutation testing compares reachable graphs with the ghosts projected out.
"""

from __future__ import annotations

from turnbound.reference.errors import TableError
from turnbound.reference.expr import Expr, refs
from turnbound.reference.table import Table


def ghost_names(table: Table) -> frozenset[str]:
    return frozenset(v.name for v in table.variables if v.ghost)


def check_ghosts(table: Table) -> None:
    """Reject the first place where behaviour reads a ghost (file, item, field, the ghost)."""
    ghosts = ghost_names(table)
    if not ghosts:
        return

    def read(where: str, node: Expr) -> None:
        names = sorted(r.name for r in refs(node) if r.kind == "var" and r.name in ghosts)
        if names:
            raise TableError(
                table.source,
                where,
                f"reads the ghost variable {names[0]!r}; a ghost may be read only by claims, lemmas "
                "and the updates of other ghosts (drop `ghost = true` if behaviour depends on it)",
            )

    for t in table.transitions:
        where = f"transition {t.id!r}"
        read(f"{where}.guard", t.guard)
        for name, expr in t.args:
            read(f"{where}.args.{name}", expr)
        for var, expr in t.updates:
            if var not in ghosts:
                read(f"{where}.update.{var}", expr)
    for i, rule in enumerate(table.report):
        read(f"report[{i}].when", rule.when)
        for name in sorted(ghosts):
            if f"{{{name}}}" in rule.line:  # the loader checked every placeholder names something
                raise TableError(
                    table.source,
                    f"report[{i}].line",
                    f"shows the ghost variable {name!r}; a probe line is behaviour, a ghost is not",
                )
