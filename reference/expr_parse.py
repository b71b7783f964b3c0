"""Parse expression text into the typed tree, with an allow-list of Python syntax.

Python's own parser (`ast`, eval mode) reads the text; only the node types listed
here are accepted, so a table is data and can never run code.

The grammar, exactly: ASCII names (letters, digits, `_`), decimal integer literals,
`true` and `false`, `+ - *` on integers, and (only where the scope declares them, as
in a step claim) the dotted names `next.x`, `arg.a` and `fact.f`, `< <= > >= == !=` (chained comparisons mean
`and`), `and`, `or`, `not`, `A if C else B`, parentheses and white space. Anything
else Python would read is refused before parsing, naming what was found: comments,
strings, other number forms (`0x10`, `1_000`, `1e3`), Python's `True`/`False`/`None`,
and every non-ASCII character (a look-alike letter would otherwise read as an ASCII name).
"""

from __future__ import annotations

import ast
import itertools
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

from turnbound.reference.errors import ExpressionError
from turnbound.reference.expr import Arith, Compare, Cond, Expr, Lit, Logic, Neg, Not, Ref, RefKind
from turnbound.reference.limits import MAX_EXPRESSION_CHARS as MAX_TEXT
from turnbound.reference.limits import MAX_EXPRESSION_DEPTH as MAX_DEPTH
from turnbound.reference.limits import MAX_LITERAL
from turnbound.reference.types import BOOL, INT, BoolType, EnumType, IntType, Type

_NUMBER = re.compile(r"(?<![A-Za-z0-9_])[0-9][A-Za-z0-9_]*")
_PYTHON_CONSTANTS = re.compile(r"(?<![A-Za-z0-9_])(True|False|None)(?![A-Za-z0-9_])")


@dataclass(frozen=True)
class Symbol:
    """A name an expression may read, with its kind and type."""

    name: str
    kind: RefKind
    type: Type


Scope = Mapping[str, Symbol]

DOTTED_ROOTS = ("next", "arg", "fact")
"""The three names a step claim reads attributes of: the state after, the arguments, the outcome."""

_ARITH: dict[type[ast.operator], str] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
_CMP: dict[type[ast.cmpop], str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
}
_FORBIDDEN: dict[type[ast.AST], str] = {
    ast.Attribute: "attribute access",
    ast.Call: "function calls",
    ast.Lambda: "lambdas",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.Subscript: "subscripts",
    ast.Starred: "starred expressions",
    ast.NamedExpr: "assignment expressions",
    ast.JoinedStr: "f-strings",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.List: "lists",
    ast.Tuple: "tuples",
    ast.Set: "sets",
    ast.Dict: "dicts",
}


def _paren_depth(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest


def parse_expr(text: str, scope: Scope, expected: Type | None = None) -> Expr:
    """Parse and type-check `text`; `expected` also resolves bare enum members."""
    if not isinstance(text, str):
        raise ExpressionError(f"expected an expression string, got {text!r}")
    if len(text) > MAX_TEXT:
        raise ExpressionError(f"expression is {len(text)} characters long; the limit is {MAX_TEXT}")
    if _paren_depth(text) > MAX_DEPTH:
        raise ExpressionError(f"expression nests deeper than {MAX_DEPTH} levels")
    _check_characters(text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # Python's warnings (`1if x else 2`) are errors here, not noise
            tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"syntax error in {text!r}: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError, Warning):
        raise ExpressionError(f"expression {text[:40]!r}… is too large or too deeply nested") from None
    node = _Typer(scope, text).expr(tree.body, expected, 0)
    _check_literals(text)
    if expected is not None and node.type != expected:
        raise ExpressionError(f"{text!r} has type {node.type}, expected {expected}")
    return node


def _check_characters(text: str) -> None:
    """Before Python reads the text: what its parser would silently drop or normalise."""
    for i, ch in enumerate(text):
        if ch == "#":
            what = "'#' starts a comment, which the table language does not have"
        elif ch == "\\":
            what = "a backslash is not part of the table language"
        elif ord(ch) > 127:
            what = f"non-ASCII character {ch!r} (U+{ord(ch):04X}) is not allowed; names are ASCII"
        elif not ch.isprintable() and ch not in " \t\r\n":
            what = f"control character {ch!r} is not allowed"
        else:
            continue
        raise ExpressionError(f"in {text!r}: {what} (position {i + 1})")


def _check_literals(text: str) -> None:
    """After typing: literal forms Python reads as integers or booleans but the language does not list."""
    for m in _NUMBER.finditer(text):
        if not m.group().isascii() or not m.group().isdigit():
            raise ExpressionError(f"in {text!r}: {m.group()!r} is not a decimal integer literal")
    constant = _PYTHON_CONSTANTS.search(text)
    if constant:
        raise ExpressionError(
            f"in {text!r}: {constant.group()!r} is not part of the table language (write true or false)"
        )


class _Typer:
    def __init__(self, scope: Scope, text: str) -> None:
        self.scope = scope
        self.text = text

    def fail(self, message: str) -> ExpressionError:
        return ExpressionError(f"in {self.text!r}: {message}")

    def expr(self, node: ast.expr, expected: Type | None, depth: int) -> Expr:
        if depth > MAX_DEPTH:
            raise self.fail(f"nests deeper than {MAX_DEPTH} levels")
        dotted = self.dotted(node)
        if dotted is not None:
            return dotted
        for kind, what in _FORBIDDEN.items():
            if isinstance(node, kind):
                raise self.fail(f"{what} are not allowed in the table language")
        d = depth + 1
        if isinstance(node, ast.Constant):
            return self.constant(node.value)
        if isinstance(node, ast.Name):
            return self.name(node.id, expected)
        if isinstance(node, ast.BoolOp):
            parts = tuple(self.typed(v, BOOL, d) for v in node.values)
            return Logic("and", parts) if isinstance(node.op, ast.And) else Logic("or", parts)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return Not(self.typed(node.operand, BOOL, d))
            if isinstance(node.op, ast.USub):
                inner = self.typed(node.operand, INT, d)
                if isinstance(inner, Lit):
                    return Lit(-int(inner.value), INT)
                return Neg(inner)
            if isinstance(node.op, ast.UAdd):
                return self.typed(node.operand, INT, d)
            raise self.fail("bitwise operators are not allowed")
        if isinstance(node, ast.BinOp):
            sym = _ARITH.get(type(node.op))
            if sym is None:
                raise self.fail(f"operator {type(node.op).__name__} is not allowed; use + - * on integers")
            left, right = self.typed(node.left, INT, d), self.typed(node.right, INT, d)
            return Arith(sym, left, right)  # type: ignore[arg-type]
        if isinstance(node, ast.Compare):
            return self.compare(node, d)
        if isinstance(node, ast.IfExp):
            test = self.typed(node.test, BOOL, d)
            then = self.expr(node.body, expected, d)
            orelse = self.typed(node.orelse, then.type, d)
            return Cond(test, then, orelse, then.type)
        raise self.fail(f"{type(node).__name__} is not part of the table language")

    def dotted(self, node: ast.expr) -> Expr | None:
        """`next.x`, `arg.a`, `fact.f`: an attribute of one of those three names, and only
        where the scope declares the dotted name (a step claim's); anything else stays refused."""
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            return None
        if node.value.id not in DOTTED_ROOTS:
            return None
        name = f"{node.value.id}.{node.attr}"
        symbol = self.scope.get(name)
        if symbol is None:
            if not any(k.startswith(f"{node.value.id}.") for k in self.scope):
                return None
            known = ", ".join(sorted(k for k in self.scope if k.startswith(f"{node.value.id}."))) or "none"
            raise self.fail(f"unknown name {name!r}; known here: {known}")
        return Ref(symbol.name, symbol.kind, symbol.type)

    def typed(self, node: ast.expr, want: Type, depth: int) -> Expr:
        got = self.expr(node, want, depth)
        if got.type != want:
            raise self.fail(f"{ast.unparse(node)!r} has type {got.type}, expected {want}")
        return got

    def constant(self, value: object) -> Lit:
        if isinstance(value, bool):
            return Lit(value, BOOL)
        if isinstance(value, int):
            if abs(value) > MAX_LITERAL:
                raise self.fail(f"integer literal {value} is larger than {MAX_LITERAL}")
            return Lit(value, INT)
        raise self.fail(f"{type(value).__name__} literals are not allowed; only integers and true/false")

    def name(self, ident: str, expected: Type | None) -> Expr:
        symbol = self.scope.get(ident)
        if symbol is not None:
            return Ref(symbol.name, symbol.kind, symbol.type)
        if ident in ("true", "false"):
            return Lit(ident == "true", BOOL)
        if isinstance(expected, EnumType) and ident in expected.members:
            return Lit(ident, expected)
        if isinstance(expected, EnumType):
            raise self.fail(f"{ident!r} is not a member of {expected} ({', '.join(expected.members)})")
        known = ", ".join(sorted(self.scope)) or "none"
        raise self.fail(f"unknown name {ident!r}; known names: {known}")

    def compare(self, node: ast.Compare, depth: int) -> Expr:
        items = [node.left, *node.comparators]
        parts: list[Expr] = []
        for op, (a, b) in zip(node.ops, itertools.pairwise(items), strict=True):
            sym = _CMP.get(type(op))
            if sym is None:
                raise self.fail(f"comparison {type(op).__name__} is not allowed; use < <= > >= == !=")
            left, right = self.pair(a, b, depth)
            if sym not in ("==", "!=") and not isinstance(left.type, IntType):
                raise self.fail(f"{sym!r} compares integers, not {left.type}")
            parts.append(Compare(sym, left, right))  # type: ignore[arg-type]
        return parts[0] if len(parts) == 1 else Logic("and", tuple(parts))

    def pair(self, a: ast.expr, b: ast.expr, depth: int) -> tuple[Expr, Expr]:
        """Type two operands alike; a bare enum member takes its type from the other side."""
        if isinstance(a, ast.Name) and a.id not in self.scope and a.id not in ("true", "false"):
            right = self.expr(b, None, depth)
            return self.typed(a, right.type, depth), right
        left = self.expr(a, None, depth)
        return left, self.typed(b, left.type, depth)


def is_bool(node: Expr) -> bool:
    return isinstance(node.type, BoolType)
