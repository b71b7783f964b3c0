"""What the loader's rules share while they check one table document.

The parsed document, the file it came from, the enums declared so far, and the two
ways a rule speaks: `fail` (the one-line `TableError` naming the file, the item and
the field) and `expr` (an expression parsed in a scope, its error named the same way).
The rules themselves are the `rules_*` modules; `loader` runs them in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from turnbound.reference.errors import ExpressionError, TableError
from turnbound.reference.expr import Expr
from turnbound.reference.expr_parse import Scope, parse_expr
from turnbound.reference.model import TableDoc
from turnbound.reference.types import EnumType, Type


@dataclass
class LoadContext:
    """One table document being loaded."""

    doc: TableDoc
    source: str
    digest: str
    enums: dict[str, EnumType] = field(default_factory=dict)
    """The enums declared so far (`rules_declarations.build_enums` fills it first)."""

    def fail(self, where: str, message: str) -> TableError:
        return TableError(self.source, where, message)

    def expr(self, where: str, text: str, scope: Scope, expected: Type | None) -> Expr:
        try:
            return parse_expr(text, scope, expected)
        except ExpressionError as exc:
            raise self.fail(where, str(exc)) from None
