"""The typed expression tree shared by every engine.

Guards, updates, invariants and bounds are parsed once into these nodes. The
interpreter compiles them to closures, the prover to z3 terms, messages render
them back to text: one tree, several back ends, so the engines can not drift.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from turnbound.reference.types import BOOL, INT, BoolType, EnumType, IntType, Type, Value

RefKind = Literal["param", "var", "fact", "meta"]
"""param: a budget; var: a state variable; fact: the last host outcome; meta: trace data."""


@dataclass(frozen=True)
class Lit:
    value: Value
    type: Type


@dataclass(frozen=True)
class Ref:
    name: str
    kind: RefKind
    type: Type


@dataclass(frozen=True)
class Not:
    operand: Expr
    type: Type = BOOL


@dataclass(frozen=True)
class Neg:
    operand: Expr
    type: Type = INT


@dataclass(frozen=True)
class Arith:
    op: Literal["+", "-", "*"]
    left: Expr
    right: Expr
    type: Type = INT


@dataclass(frozen=True)
class Compare:
    op: Literal["<", "<=", ">", ">=", "==", "!="]
    left: Expr
    right: Expr
    type: Type = BOOL


@dataclass(frozen=True)
class Logic:
    op: Literal["and", "or"]
    operands: tuple[Expr, ...]
    type: Type = BOOL


@dataclass(frozen=True)
class Cond:
    test: Expr
    then: Expr
    orelse: Expr
    type: Type = INT


Expr = Lit | Ref | Not | Neg | Arith | Compare | Logic | Cond

# Binding strength for rendering: a child binding more loosely than its parent
# gets parentheses.
_PREC_COND, _PREC_OR, _PREC_AND, _PREC_NOT, _PREC_CMP, _PREC_ADD, _PREC_MUL, _PREC_NEG, _PREC_ATOM = range(9)


def _prec(node: Expr) -> int:
    if isinstance(node, Cond):
        return _PREC_COND
    if isinstance(node, Logic):
        return _PREC_OR if node.op == "or" else _PREC_AND
    if isinstance(node, Not):
        return _PREC_NOT
    if isinstance(node, Compare):
        return _PREC_CMP
    if isinstance(node, Arith):
        return _PREC_MUL if node.op == "*" else _PREC_ADD
    if isinstance(node, Neg):
        return _PREC_NEG
    if isinstance(node, Lit) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return _PREC_NEG if node.value < 0 else _PREC_ATOM
    return _PREC_ATOM


def _wrap(child: Expr, min_prec: int) -> str:
    text = render(child)
    return f"({text})" if _prec(child) < min_prec else text


def render(node: Expr) -> str:
    """Text that parses back to the same tree (used in every message and report)."""
    if isinstance(node, Lit):
        if isinstance(node.value, bool):
            return "true" if node.value else "false"
        return str(node.value)
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Not):
        return "not " + _wrap(node.operand, _PREC_NOT)
    if isinstance(node, Neg):
        return "-" + _wrap(node.operand, _PREC_NEG)
    if isinstance(node, Arith):
        p = _prec(node)
        # Left-associative: the right operand needs parentheses at equal strength.
        return f"{_wrap(node.left, p)} {node.op} {_wrap(node.right, p + 1)}"
    if isinstance(node, Compare):
        return f"{_wrap(node.left, _PREC_CMP + 1)} {node.op} {_wrap(node.right, _PREC_CMP + 1)}"
    if isinstance(node, Logic):
        p = _prec(node)
        return f" {node.op} ".join(_wrap(o, p + 1) for o in node.operands)
    return (
        f"{_wrap(node.then, _PREC_OR)} if {_wrap(node.test, _PREC_OR)} else {_wrap(node.orelse, _PREC_COND)}"
    )


def children(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Not | Neg):
        return (node.operand,)
    if isinstance(node, Arith | Compare):
        return (node.left, node.right)
    if isinstance(node, Logic):
        return node.operands
    if isinstance(node, Cond):
        return (node.test, node.then, node.orelse)
    return ()


def walk(node: Expr) -> Iterator[Expr]:
    yield node
    for child in children(node):
        yield from walk(child)


def refs(node: Expr) -> frozenset[Ref]:
    """Every name the expression reads."""
    return frozenset(n for n in walk(node) if isinstance(n, Ref))


def conjuncts(node: Expr) -> tuple[Expr, ...]:
    """The top-level `and` parts (mutation drops them one at a time)."""
    if isinstance(node, Logic) and node.op == "and":
        return node.operands
    return (node,)


TRUE = Lit(True, BOOL)
FALSE = Lit(False, BOOL)

__all__ = [
    "FALSE",
    "TRUE",
    "Arith",
    "BoolType",
    "Compare",
    "Cond",
    "EnumType",
    "Expr",
    "IntType",
    "Lit",
    "Logic",
    "Neg",
    "Not",
    "Ref",
    "children",
    "conjuncts",
    "refs",
    "render",
    "walk",
]
